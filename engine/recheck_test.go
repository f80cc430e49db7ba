package engine_test

import (
	"context"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// Result.RecheckAt is the next instant at which time alone could change a result: the
// controller evaluates the gate again then instead of periodically (policies/README.md, Time).

// waive waives code on the world's gate until expires (never when expires is zero).
func waive(code string, expires time.Time) func(w *world) {
	return func(w *world) {
		o := tollgatev1alpha1.Override{Code: code, Reason: "CHG-1234: checked by the platform team"}
		if !expires.IsZero() {
			o.Expires = &metav1.Time{Time: expires}
		}
		w.gate.Spec.Overrides = append(w.gate.Spec.Overrides, o)
	}
}

// recheckCase is a realistic world (mutated) run through some packs, and the RecheckAt it must get.
type recheckCase struct {
	name    string
	packs   []string
	data    map[string]any
	mutate  []func(w *world)
	allowed bool
	want    time.Time // zero: none
}

func TestRecheckAt(t *testing.T) {
	for _, tt := range slices.Concat(overrideRecheckCases(), packRecheckCases()) {
		t.Run(tt.name, func(t *testing.T) {
			w := realistic()
			for _, m := range tt.mutate {
				m(w)
			}
			r := packEngine(t, tt.packs, tt.data).Evaluate(context.Background(), w.input(t))
			require.NoError(t, r.Err, "%v", r.Decision.Denials)
			assert.Empty(t, r.Warnings)
			assert.Equal(t, tt.allowed, r.Decision.Allowed, "allowed: %v", r.Decision.Denials)
			if tt.want.IsZero() {
				assert.True(t, r.RecheckAt.IsZero(), "RecheckAt %v, want none", r.RecheckAt)
				return
			}
			assert.Equal(t, tt.want, r.RecheckAt)
			assert.Equal(t, time.UTC, r.RecheckAt.Location())
			assert.True(t, r.RecheckAt.After(now))
		})
	}
}

// overrideRecheckCases: denials with and without overrides, and when those expire.
func overrideRecheckCases() []recheckCase {
	progressing := func(w *world) { w.health("True", "True", "False") }
	return []recheckCase{{
		name:    "nothing depends on time",
		allowed: true,
	}, {
		name:   "a standing denial without an override does not depend on time",
		mutate: []func(w *world){progressing},
	}, {
		name:    "an override that waives a denial until it expires: its expiry",
		mutate:  []func(w *world){progressing, waive("OperatorProgressing", now.Add(3*time.Hour))},
		allowed: true,
		want:    now.Add(3 * time.Hour),
	}, {
		name:    "an override without expiry does not depend on time",
		mutate:  []func(w *world){progressing, waive("OperatorProgressing", time.Time{})},
		allowed: true,
	}, {
		name:   "an expired override does not either",
		mutate: []func(w *world){progressing, waive("OperatorProgressing", now.Add(-time.Hour))},
	}, {
		name:    "an override that waives nothing does not either",
		mutate:  []func(w *world){waive("OperatorDegraded", now.Add(3*time.Hour))},
		allowed: true,
	}}
}

// packRecheckCases: the instants the window, soak and freeze packs depend on, alone and together.
func packRecheckCases() []recheckCase {
	// now is Wednesday 2024-05-01 12:00 UTC; New York is UTC-4 in May.
	weekend := windows(map[string]any{"days": []any{"Sat", "Sun"}, "start": "02:00", "end": "06:00", "timeZone": "America/New_York"})
	saturdayOpening := time.Date(2024, 5, 4, 6, 0, 0, 0, time.UTC)
	all := map[string]any{"packs": map[string]any{
		"window": weekend["packs"].(map[string]any)["window"],
		"freeze": map[string]any{"periods": []any{map[string]any{"start": "2024-05-01T18:00:00Z", "end": "2024-05-02T00:00:00Z"}}},
	}}
	return []recheckCase{{
		name:  "window: outside every window, the next opening",
		packs: []string{"window"},
		data:  weekend,
		want:  saturdayOpening,
	}, {
		name:    "window: inside a window, its closing",
		packs:   []string{"window"},
		data:    windows(map[string]any{"start": "08:00", "end": "16:00", "timeZone": "Europe/Berlin"}),
		allowed: true,
		want:    time.Date(2024, 5, 1, 14, 0, 0, 0, time.UTC), // 16:00 in Berlin (UTC+2)
	}, {
		name:  "soak: the end of the soak time",
		packs: []string{"soak"},
		// the plan appeared an hour ago; the default soak time is 24 hours
		mutate: []func(w *world){func(w *world) { w.plan.CreationTimestamp = earlier }},
		want:   now.Add(23 * time.Hour),
	}, {
		name:  "the earliest of several: a freeze's start before a window's opening and the soak time's end",
		packs: []string{"freeze", "soak", "window"},
		data:  all,
		mutate: []func(w *world){
			func(w *world) { w.plan.CreationTimestamp = earlier },
		},
		want: time.Date(2024, 5, 1, 18, 0, 0, 0, time.UTC),
	}, {
		name:  "the earliest of several: an override's expiry before them",
		packs: []string{"freeze", "soak", "window"},
		data:  all,
		mutate: []func(w *world){
			func(w *world) { w.plan.CreationTimestamp = earlier },
			waive("OutsideMaintenanceWindow", now.Add(2*time.Hour)),
		},
		want: now.Add(2 * time.Hour),
	}}
}

// A policy that replaces tollgate.main may write any recheckAt: an unusable one is a warning
// and a zero RecheckAt, and never changes the decision.
func TestRecheckAtFromAReplacedMain(t *testing.T) {
	withMain := func(allowed, recheckAt string) fstest.MapFS {
		fs := testPolicies()
		fs["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

result := {"decision": {"allowed": ` + allowed + `, "denials": [d | d := {"code": "Held", "message": "held"}; not ` + allowed + `]}, "recheckAt": ` + recheckAt + `}
`)}
		return fs
	}
	const nowText = "2024-05-01T12:00:00Z"
	tests := []struct {
		name      string
		recheckAt string // Rego
		want      time.Time
		warning   string
	}{
		{name: "null: none", recheckAt: "null"},
		{name: "a time in another offset, in UTC", recheckAt: `"2024-05-01T15:30:00.25+02:00"`, want: time.Date(2024, 5, 1, 13, 30, 0, 250000000, time.UTC)},
		{name: "not a string", recheckAt: "1714568400000000000", warning: "result.recheckAt is a number, want an RFC 3339 time or null"},
		{name: "an object", recheckAt: `{"at": "2024-05-01T13:00:00Z"}`, warning: "result.recheckAt is an object"},
		{name: "not RFC 3339", recheckAt: `"tomorrow"`, warning: `result.recheckAt "tomorrow" is not an RFC 3339 time`},
		{name: "no zone", recheckAt: `"2024-05-01T13:00:00"`, warning: "is not an RFC 3339 time"},
		{name: "now itself", recheckAt: `"` + nowText + `"`, warning: "is not after input.now 2024-05-01T12:00:00Z"},
		{name: "the past", recheckAt: `"2024-05-01T11:00:00Z"`, warning: "is not after input.now"},
	}
	for _, tt := range tests {
		for _, allowed := range []string{"true", "false"} {
			t.Run(tt.name+", allowed "+allowed, func(t *testing.T) {
				e := newEngine(t, engine.Options{Policies: withMain(allowed, tt.recheckAt)})
				r := e.Evaluate(context.Background(), map[string]any{"now": nowText})
				require.NoError(t, r.Err, "a recheckAt never makes a PolicyError")
				assert.Equal(t, allowed == "true", r.Decision.Allowed, "a recheckAt never changes the decision")
				assert.Equal(t, tt.want, r.RecheckAt)
				if tt.warning == "" {
					assert.Empty(t, r.Warnings)
					return
				}
				require.Len(t, r.Warnings, 1)
				assert.Contains(t, r.Warnings[0], tt.warning)
			})
		}
	}

	t.Run("absent: none", func(t *testing.T) {
		fs := testPolicies()
		fs["main/main.rego"] = &fstest.MapFile{Data: []byte("package tollgate.main\n\nresult := {\"decision\": {\"allowed\": true, \"denials\": []}}\n")}
		r := newEngine(t, engine.Options{Policies: fs}).Evaluate(context.Background(), map[string]any{"now": nowText})
		require.NoError(t, r.Err)
		assert.True(t, r.RecheckAt.IsZero())
		assert.Empty(t, r.Warnings)
	})

	t.Run("without input.now a well-formed time is taken as it is", func(t *testing.T) {
		r := newEngine(t, engine.Options{Policies: withMain("true", `"2024-05-01T11:00:00Z"`)}).Evaluate(context.Background(), map[string]any{})
		require.NoError(t, r.Err)
		assert.Equal(t, time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC), r.RecheckAt)
	})

	t.Run("the PolicyError fallback of a built-in error keeps it", func(t *testing.T) {
		fs := testPolicies()
		fs["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

deny contains "TooBig" if to_number(input.n) > 5

result := {"decision": {"allowed": count(deny) == 0, "denials": [{"code": c, "message": c} | some c in deny]}, "recheckAt": "2024-05-01T13:00:00Z"}
`)}
		r := newEngine(t, engine.Options{Policies: fs}).Evaluate(context.Background(), map[string]any{"now": nowText, "n": "x"})
		require.ErrorIs(t, r.Err, engine.ErrEvaluation)
		assert.False(t, r.Decision.Allowed)
		assert.Equal(t, time.Date(2024, 5, 1, 13, 0, 0, 0, time.UTC), r.RecheckAt)
	})
}
