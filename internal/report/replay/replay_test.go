package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
)

const (
	loggedRevision   = "0123456789ab"
	replayedRevision = "fedcba987654"
)

// fixed are policies that decide every input the same way.
type fixed struct{ res engine.Result }

func (f fixed) Evaluate(context.Context, map[string]any) *engine.Result {
	r := f.res
	r.Revision = replayedRevision
	return &r
}

func (fixed) Revision() string { return replayedRevision }

func allow() engine.Decision { return engine.Decision{Allowed: true} }

// hold is a held decision with a standing denial per code; a code ending in "!" is
// overridden (and so not standing).
func hold(codes ...string) engine.Decision {
	d := engine.Decision{}
	for _, c := range codes {
		code, overridden := strings.CutSuffix(c, "!")
		d.Denials = append(d.Denials, engine.Denial{Denial: tollgatev1alpha1.Denial{Code: code, Message: code + " says no", Overridden: overridden}})
	}
	return d
}

// doc is an input document for demo/etcd.
func doc() map[string]any {
	return map[string]any{
		"now":          "2026-11-20T12:00:00Z",
		"subscription": map[string]any{"metadata": map[string]any{"namespace": "demo", "name": "etcd"}},
	}
}

// logged is an event as the manager logs it: a decision on doc(), with its digest.
func logged(d engine.Decision) decisionlog.Logged {
	in := doc()
	return decisionlog.Logged{
		Line: 1,
		Event: decisionlog.Event{
			DecisionID:  "e242c304-812b-43c5-95f8-0ab841f398c7",
			Path:        decisionlog.PathDecision,
			Input:       in,
			InputDigest: engine.Digest(in),
			InputSHA256: decisionlog.InputSHA256(in),
			Bundles:     map[string]decisionlog.BundleInfo{decisionlog.PolicyBundle: {Revision: loggedRevision}},
			Timestamp:   time.Date(2026, 11, 20, 13, 0, 0, 0, time.FixedZone("CET", 3600)),
		},
		Decision: &d,
	}
}

// replayCase is one logged event, replayed against policies that decide it as replayed.
type replayCase struct {
	name     string
	event    decisionlog.Logged
	replayed engine.Result
	outcome  string
	reason   string
	want     [2]*replay.Decision // logged, replayed
}

func TestReplayComparesEachLoggedEvent(t *testing.T) {
	for _, tt := range slices.Concat(decisionReplayCases(), inputReplayCases()) {
		t.Run(tt.name, func(t *testing.T) {
			rep := replay.Replay(context.Background(), fixed{tt.replayed}, []decisionlog.Logged{tt.event})
			require.Len(t, rep.Events, 1)
			ev := rep.Events[0]
			assert.Equal(t, tt.outcome, ev.Outcome)
			assert.Equal(t, tt.reason, ev.Reason)
			if tt.event.Event.Input != nil {
				assert.Equal(t, "demo/etcd", ev.Namespace+"/"+ev.Name, "input.subscription.metadata")
			}
			assert.Equal(t, "2026-11-20T12:00:00Z", ev.Timestamp, "in UTC")
			if diff := cmp.Diff(tt.want, [2]*replay.Decision{ev.Logged, ev.Replayed}); diff != "" {
				t.Errorf("logged, replayed (-want +got):\n%s", diff)
			}
		})
	}
}

// allowedAsLogged is the logged allowed decision of logged(allow()).
func allowedAsLogged() *replay.Decision {
	return &replay.Decision{Allowed: true, Codes: []string{}, Revision: loggedRevision}
}

// decisionReplayCases: replayable events, the same or DIFFERENT as replayed.
func decisionReplayCases() []replayCase {
	return []replayCase{
		{
			name: "an input that decides as logged is the same", event: logged(allow()), replayed: engine.Result{Decision: allow()},
			outcome: replay.OutcomeSame,
			want:    [2]*replay.Decision{allowedAsLogged(), {Allowed: true, Codes: []string{}, Revision: replayedRevision}},
		},
		{
			name: "only standing codes are compared: an overridden denial is no difference", event: logged(hold("ChangeFreeze", "MaintenanceWindow!")),
			replayed: engine.Result{Decision: hold("ChangeFreeze")}, outcome: replay.OutcomeSame,
			want: [2]*replay.Decision{{Codes: []string{"ChangeFreeze"}, Revision: loggedRevision}, {Codes: []string{"ChangeFreeze"}, Revision: replayedRevision}},
		},
		{
			name: "an input that is now held is DIFFERENT", event: logged(allow()), replayed: engine.Result{Decision: hold("DenyAll")},
			outcome: replay.OutcomeDifferent,
			want:    [2]*replay.Decision{allowedAsLogged(), {Codes: []string{"DenyAll"}, Revision: replayedRevision}},
		},
		{
			name: "a policy error is the reason of the outcome", event: logged(allow()),
			replayed: engine.Result{Decision: hold("PolicyError"), Err: errors.New("eval_conflict_error")},
			outcome:  replay.OutcomeDifferent, reason: "eval_conflict_error",
			want: [2]*replay.Decision{allowedAsLogged(), {Codes: []string{"PolicyError"}, Revision: replayedRevision}},
		},
	}
}

// inputReplayCases: events that cannot be replayed, and events whose input was edited.
func inputReplayCases() []replayCase {
	return []replayCase{
		{
			name: "an event logged without input is not replayable", event: without(logged(allow()), "input"),
			outcome: replay.OutcomeNotReplayable, reason: "logged without input",
			want: [2]*replay.Decision{allowedAsLogged(), nil},
		},
		{
			name: "an event without result.decision is not replayable", event: without(logged(allow()), "decision"),
			outcome: replay.OutcomeNotReplayable, reason: "logged without result.decision",
		},
		{
			name: "an event of another path is not replayable", event: withPath(logged(allow()), "system/authz/allow"),
			outcome: replay.OutcomeNotReplayable, reason: "not a Tollgate decision (path system/authz/allow)",
			want: [2]*replay.Decision{allowedAsLogged(), nil},
		},
		{
			name: "a bypass records what someone else did: nothing to replay", event: withPath(without(logged(allow()), "input"), decisionlog.PathBypass),
			outcome: replay.OutcomeNotReplayable, reason: "a bypass: a record of what someone else did, with no decision to replay",
			want: [2]*replay.Decision{allowedAsLogged(), nil},
		},
		{
			name: "an event without input_digest is INPUT EDITED, whatever it decides", event: without(logged(allow()), "input_digest"),
			replayed: engine.Result{Decision: allow()}, outcome: replay.OutcomeInputEdited,
			reason: "no input_digest: Tollgate logs one with every input",
			want:   [2]*replay.Decision{allowedAsLogged(), {Allowed: true, Codes: []string{}, Revision: replayedRevision}},
		},
		{
			name: "an event without input_sha256 is INPUT EDITED, whatever it decides", event: without(logged(allow()), "input_sha256"),
			replayed: engine.Result{Decision: allow()}, outcome: replay.OutcomeInputEdited,
			reason: "no input_sha256: Tollgate logs one with every input",
			want:   [2]*replay.Decision{allowedAsLogged(), {Allowed: true, Codes: []string{}, Revision: replayedRevision}},
		},
		{
			name: "an event whose clock was edited is INPUT EDITED, though its state digest matches", event: withNow(logged(allow()), "2027-01-01T00:00:00Z"),
			replayed: engine.Result{Decision: allow()}, outcome: replay.OutcomeInputEdited,
			reason: "digest mismatch: the input's clock (now) or gate status is not the one decided on: its sha256 is " +
				decisionlog.InputSHA256(withNow(logged(allow()), "2027-01-01T00:00:00Z").Event.Input) + ", input_sha256 says " + decisionlog.InputSHA256(doc()),
			want: [2]*replay.Decision{allowedAsLogged(), {Allowed: true, Codes: []string{}, Revision: replayedRevision}},
		},
	}
}

// without is l without its input, its result.decision, its input_digest or its input_sha256.
func without(l decisionlog.Logged, what string) decisionlog.Logged {
	switch what {
	case "input":
		l.Event.Input, l.Event.Erased = nil, []string{decisionlog.ErasedInput}
	case "decision":
		l.Decision = nil
	case "input_digest":
		l.Event.InputDigest = ""
	case "input_sha256":
		l.Event.InputSHA256 = ""
	}
	return l
}

// withNow is l with its input's clock edited to now, its digests as logged.
func withNow(l decisionlog.Logged, now string) decisionlog.Logged {
	l.Event.Input["now"] = now
	return l
}

func withPath(l decisionlog.Logged, path string) decisionlog.Logged {
	l.Event.Path = path
	return l
}

func TestReplayCountsTheOutcomesAndSaysTheDifferences(t *testing.T) {
	ctx := context.Background()
	same := replay.Replay(ctx, fixed{engine.Result{Decision: allow()}}, []decisionlog.Logged{logged(allow()), logged(allow())})
	assert.Equal(t, replayedRevision, same.PolicyRevision)
	assert.Equal(t, [4]int{2, 0, 0, 0}, [4]int{same.Same, same.Different, same.NotReplayable, same.InputEdited})
	assert.Empty(t, same.Differences())

	events := []decisionlog.Logged{logged(allow()), logged(hold("DenyAll")), without(logged(allow()), "input"), without(logged(allow()), "input_digest")}
	mixed := replay.Replay(ctx, fixed{engine.Result{Decision: allow()}}, events)
	assert.Equal(t, [4]int{1, 1, 1, 1}, [4]int{mixed.Same, mixed.Different, mixed.NotReplayable, mixed.InputEdited})
	assert.Equal(t, []string{
		"1 of 4 logged decisions come out differently with these policies",
		"1 of 4 logged inputs are not the ones their digests were taken of",
	}, mixed.Differences())

	empty := replay.Replay(ctx, fixed{}, nil)
	b, err := json.Marshal(empty)
	require.NoError(t, err)
	assert.JSONEq(t, `{"policyRevision": "fedcba987654", "events": [], "same": 0, "different": 0, "notReplayable": 0, "inputEdited": 0}`, string(b),
		"an empty log is an empty list of events, not null")
}

// TestReplayOfALogTheLoggerWrote logs decisions with the embedded policies, edits three of the
// logged lines (a Subscription's name, the input_digest, the clock), reads the log back and
// replays it: the untouched event is the same, the edited ones are their own outcome, with
// both digests named.
func TestReplayOfALogTheLoggerWrote(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	in := doc()
	res := eng.Evaluate(ctx, in)
	var buf bytes.Buffer
	log := decisionlog.New(decisionlog.NewWriterSink(&buf), decisionlog.Options{Log: logr.Discard()})
	for range 4 {
		log.Decision(&approval.Decision{Document: &input.Document{Doc: in, Subscription: &v1alpha1.Subscription{}}, Result: res})
	}
	lines := strings.SplitAfter(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 4)
	lines[1] = edit(t, lines[1], func(ev map[string]any) {
		ev["input"].(map[string]any)["subscription"].(map[string]any)["metadata"].(map[string]any)["name"] = "other"
	})
	lines[2] = edit(t, lines[2], func(ev map[string]any) { delete(ev, "input_digest") })
	lines[3] = edit(t, lines[3], func(ev map[string]any) { ev["input"].(map[string]any)["now"] = "2027-01-01T00:00:00Z" })
	events, err := decisionlog.Read(strings.NewReader(strings.Join(lines, "")))
	require.NoError(t, err)

	rep := replay.Replay(ctx, eng, events)
	assert.Equal(t, eng.Revision(), rep.PolicyRevision)
	assert.Equal(t, []string{replay.OutcomeSame, replay.OutcomeInputEdited, replay.OutcomeInputEdited, replay.OutcomeInputEdited},
		[]string{rep.Events[0].Outcome, rep.Events[1].Outcome, rep.Events[2].Outcome, rep.Events[3].Outcome})
	assert.Equal(t, []int{1, 2, 3, 4}, []int{rep.Events[0].Line, rep.Events[1].Line, rep.Events[2].Line, rep.Events[3].Line})
	assert.Equal(t, [4]int{1, 0, 0, 3}, [4]int{rep.Same, rep.Different, rep.NotReplayable, rep.InputEdited})
	assert.Contains(t, rep.Events[3].Reason, "the input's clock (now) or gate status is not the one decided on", "an edited clock is seen")
	assert.Contains(t, rep.Events[1].Reason, "digest mismatch: the input's digest is ")
	assert.Contains(t, rep.Events[1].Reason, ", input_digest says "+engine.Digest(in))
	assert.Equal(t, "demo/other", rep.Events[1].Namespace+"/"+rep.Events[1].Name, "the Subscription is the one the input names")
	assert.NotNil(t, rep.Events[1].Replayed, "what the edited input decides is still shown")
	assert.Equal(t, "no input_digest: Tollgate logs one with every input", rep.Events[2].Reason)
}

// edit changes one logged line as JSON.
func edit(t *testing.T, line string, change func(ev map[string]any)) string {
	t.Helper()
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &ev))
	change(ev)
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	return string(b) + "\n"
}
