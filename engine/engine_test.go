package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// A tiny policy set with the real contract's shape: main assembles the result from
// tollgate.upgrade's denials, and allowed defaults to false.
const testMain = `# METADATA
# description: Assembles the result (test double).
package tollgate.main

import data.tollgate.upgrade

default allowed := false

allowed if count(_standing) == 0

_standing contains d if {
	some d in upgrade.deny
	not d.overridden
}

result := {
	"conditions": [{"type": "ResolutionFailed", "status": "False", "reason": "NoResolutionFailure", "message": "ok"}],
	"health": [{"type": "Available", "status": "True", "reason": "InstallSucceeded", "message": "ok"}],
	"state": "AtLatestKnown",
	"upToDate": true,
	"catalogStatus": [],
	"catalogValidation": [],
	"decision": {"allowed": allowed, "denials": [d | some d in upgrade.deny]},
}
`

const testUpgrade = `package tollgate.upgrade

_disabled := object.get(data.tollgate.config, "disabledCodes", [])

# METADATA
# title: The operator says it must not be upgraded now
# description: Mirrors OperatorCondition Upgradeable=False.
# custom:
#   code: OperatorNotUpgradeable
deny contains d if {
	input.upgradeable == false
	trace("upgradeable is false")
	print("operator", input.name, "is not upgradeable")
	code := rego.metadata.rule().custom.code
	not code in _disabled
	d := {"code": code, "message": sprintf("%s is migrating", [input.name]), "overridden": false}
}
`

func testPolicies() fstest.MapFS {
	return fstest.MapFS{
		"main/main.rego":            {Data: []byte(testMain)},
		"upgrade/upgrade.rego":      {Data: []byte(testUpgrade)},
		"upgrade/upgrade_test.rego": {Data: []byte("this is not rego and must not be loaded")},
	}
}

func newEngine(t testing.TB, opts engine.Options) *engine.Engine {
	t.Helper()
	if opts.Policies == nil {
		opts.Policies = testPolicies()
	}
	e, err := engine.New(context.Background(), opts)
	require.NoError(t, err)
	return e
}

// rowOf is the 1-based row of the first line of src containing s.
func rowOf(t testing.TB, src, s string) int {
	t.Helper()
	for i, line := range strings.Split(src, "\n") {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	t.Fatalf("%q not in source", s)
	return 0
}

func TestNewReportsCompileErrors(t *testing.T) {
	tests := []struct {
		scenario string
		modules  []engine.Module
		file     string
		row      int
		contains string
	}{{
		scenario: "a syntax error in an admin module names its file and row",
		modules:  []engine.Module{{Path: "admin/window.rego", Source: "package tollgate.admin\n\nx if {\n\tinput.a ==\n"}},
		file:     "admin/window.rego",
		row:      5,
	}, {
		scenario: "an admin module calling http.send is refused",
		modules: []engine.Module{{Path: "admin/exfil.rego", Source: "package tollgate.admin\n\n" +
			"x := http.send({\"method\": \"get\", \"url\": \"http://example.com\"})\n"}},
		file:     "admin/exfil.rego",
		row:      3,
		contains: "http.send is not allowed",
	}, {
		scenario: "an admin module resolving names is refused",
		modules:  []engine.Module{{Path: "admin/dns.rego", Source: "package tollgate.admin\n\nx := net.lookup_ip_addr(\"example.com\")\n"}},
		file:     "admin/dns.rego",
		row:      3,
		contains: "net.lookup_ip_addr is not allowed",
	}, {
		scenario: "an admin module reading the manager's runtime is refused",
		modules:  []engine.Module{{Path: "admin/env.rego", Source: "package tollgate.admin\n\nx := opa.runtime().env\n"}},
		file:     "admin/env.rego",
		row:      3,
		contains: "opa.runtime is not allowed",
	}, {
		scenario: "strict mode rejects an unused variable",
		modules:  []engine.Module{{Path: "admin/unused.rego", Source: "package tollgate.admin\n\nx if {\n\ty := 1\n\tinput.a == 2\n}\n"}},
		file:     "admin/unused.rego",
		row:      4,
		contains: "assigned var y unused",
	}, {
		scenario: "a broken replacement of an embedded file fails the whole set",
		modules:  []engine.Module{{Path: "upgrade/upgrade.rego", Source: "package tollgate.upgrade\n\ndeny contains x if {\n"}},
		file:     "upgrade/upgrade.rego",
	}, {
		scenario: "a module path outside the policy tree is refused",
		modules:  []engine.Module{{Path: "../etc/evil.rego", Source: "package x\n"}},
		file:     "../etc/evil.rego",
		contains: "module path",
	}}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			e, err := engine.New(context.Background(), engine.Options{Policies: testPolicies(), Modules: tt.modules})
			require.Error(t, err)
			assert.Nil(t, e)
			assert.ErrorIs(t, err, engine.ErrCompile)
			var ce *engine.CompileError
			require.ErrorAs(t, err, &ce)
			require.NotEmpty(t, ce.Items)
			item := ce.Items[0]
			assert.Equal(t, tt.file, item.File, "%v", ce)
			if tt.row != 0 {
				assert.Equal(t, tt.row, item.Row, "%v", ce)
			}
			assert.Contains(t, item.Message, tt.contains)
		})
	}
}

func TestEvaluateDecides(t *testing.T) {
	e := newEngine(t, engine.Options{})
	src := testUpgrade
	row := rowOf(t, src, "deny contains d if")

	tests := []struct {
		scenario string
		input    map[string]any
		want     engine.Decision
	}{{
		scenario: "an upgradeable operator is allowed",
		input:    map[string]any{"name": "etcd", "upgradeable": true},
		want:     engine.Decision{Allowed: true},
	}, {
		scenario: "a denial's code comes from METADATA and its source names file, row and title",
		input:    map[string]any{"name": "etcd", "upgradeable": false},
		want: engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{
			Code:    "OperatorNotUpgradeable",
			Message: "etcd is migrating",
			Source:  fmt.Sprintf("upgrade/upgrade.rego:%d (deny: The operator says it must not be upgraded now)", row),
		}}}},
	}}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			r := e.Evaluate(context.Background(), tt.input)
			require.NoError(t, r.Err)
			assert.Empty(t, cmp.Diff(tt.want, r.Decision))
			assert.Equal(t, e.Revision(), r.Revision)
			assert.Equal(t, "AtLatestKnown", r.State)
			require.NotNil(t, conditionOf(r, "Available"))
		})
	}
}

func TestEvaluateFailsClosed(t *testing.T) {
	withMain := func(result string) fstest.MapFS {
		fs := testPolicies()
		fs["main/main.rego"] = &fstest.MapFile{Data: []byte("package tollgate.main\n\n" + result + "\n")}
		return fs
	}
	tests := []struct {
		scenario string
		policies fstest.MapFS
		timeout  time.Duration
		input    map[string]any
		err      error
		message  string
	}{{
		scenario: "a runaway policy hits the deadline instead of hanging",
		policies: withMain(`result := {"decision": {"allowed": n > 0, "denials": []}} if {
	n := count([1 | some i in numbers.range(1, 100000); some j in numbers.range(1, 100000); i == j + 1])
}`),
		timeout: 200 * time.Millisecond,
		err:     engine.ErrDeadline,
		message: "deadline",
	}, {
		scenario: "an undefined result is a policy error",
		policies: withMain(`result := {"decision": {"allowed": true}} if input.never`),
		err:      engine.ErrUndefined,
		message:  "no value",
	}, {
		scenario: "a result that is not an object is a policy error",
		policies: withMain(`result := "allowed"`),
		err:      engine.ErrResultShape,
		message:  "result is a string",
	}, {
		scenario: "a missing allowed is a policy error, not an approval",
		policies: withMain(`result := {"decision": {"denials": []}}`),
		err:      engine.ErrResultShape,
		message:  "decision.allowed is missing",
	}, {
		scenario: "an allowed that is not a boolean is a policy error",
		policies: withMain(`result := {"decision": {"allowed": "yes", "denials": []}}`),
		err:      engine.ErrResultShape,
		message:  "decision.allowed is a string",
	}, {
		scenario: "a denial of the wrong type is a policy error",
		policies: withMain(`result := {"decision": {"allowed": false, "denials": [{"code": 7}]}}`),
		err:      engine.ErrResultShape,
	}, {
		scenario: "conflicting values of a complete rule are a policy error",
		policies: withMain(`result := {"decision": {"allowed": true, "denials": []}} if input.a
result := {"decision": {"allowed": false, "denials": []}} if input.b`),
		input:   map[string]any{"a": true, "b": true},
		err:     engine.ErrEvaluation,
		message: "conflict",
	}, {
		scenario: "a built-in error that may have dropped a denial turns an approval into a policy error",
		policies: withMain(`deny contains "TooBig" if to_number(input.n) > 5

result := {"decision": {"allowed": count(deny) == 0, "denials": [{"code": c, "message": c} | some c in deny]}}`),
		input:   map[string]any{"n": "not a number"},
		err:     engine.ErrEvaluation,
		message: "a built-in function failed",
	}}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			e := newEngine(t, engine.Options{Policies: tt.policies, Timeout: tt.timeout})
			start := time.Now()
			r := e.Evaluate(context.Background(), tt.input)
			assert.Less(t, time.Since(start), 5*time.Second)
			require.NotNil(t, r)
			assert.ErrorIs(t, r.Err, tt.err)
			assert.False(t, r.Decision.Allowed)
			require.Len(t, r.Decision.Denials, 1)
			assert.Equal(t, tollgatev1alpha1.CodePolicyError, r.Decision.Denials[0].Code)
			assert.Equal(t, tollgatev1alpha1.CodePolicyError, r.Decision.BlockedBy())
			assert.Contains(t, r.Decision.Denials[0].Message, tt.message)
			assert.Contains(t, r.Decision.Denials[0].Message, e.Revision())
		})
	}
}

func TestBuiltinErrorsDoNotHideAStandingDenial(t *testing.T) {
	policies := testPolicies()
	policies["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

deny contains "TooBig" if to_number(input.n) > 5

deny contains "Always"

result := {"decision": {"allowed": count(deny) == 0, "denials": [{"code": c, "message": c} | some c in deny]}}
`)}
	r := newEngine(t, engine.Options{Policies: policies}).Evaluate(context.Background(), map[string]any{"n": "x"})
	require.NoError(t, r.Err)
	assert.Equal(t, "Always", r.Decision.BlockedBy())
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "to_number")
}

func TestEvaluateHonoursCallerCancellation(t *testing.T) {
	e := newEngine(t, engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := e.Evaluate(ctx, map[string]any{"upgradeable": true})
	assert.ErrorIs(t, r.Err, engine.ErrDeadline)
	assert.False(t, r.Decision.Allowed)
}

func TestDenialsAreSortedCappedAndConsistent(t *testing.T) {
	policies := testPolicies()
	policies["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

# The policy claims allowed although denials stand: the engine must not believe it.
result := {"decision": {"allowed": true, "denials": array.concat(
	[{"code": "Zeta", "message": "waived", "overridden": true}],
	[{"code": "Alpha", "message": sprintf("m%02d", [i]), "overridden": false} | some i in numbers.range(1, 40)],
)}}
`)}
	e := newEngine(t, engine.Options{Policies: policies})
	r := e.Evaluate(context.Background(), nil)
	require.NoError(t, r.Err)
	assert.False(t, r.Decision.Allowed)
	assert.Len(t, r.Decision.Denials, engine.MaxDenials)
	assert.Equal(t, 9, r.Decision.Truncated)
	assert.Equal(t, "m01", r.Decision.Denials[0].Message)
	assert.Equal(t, "m32", r.Decision.Denials[31].Message)
	assert.Equal(t, "Alpha", r.Decision.BlockedBy())
}

func TestOverriddenDenialsSortLastAndDoNotBlock(t *testing.T) {
	policies := testPolicies()
	policies["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

result := {"decision": {"allowed": true, "denials": [
	{"code": "Beta", "message": "b", "overridden": true},
	{"code": "Alpha", "message": "a", "overridden": true},
]}}
`)}
	r := newEngine(t, engine.Options{Policies: policies}).Evaluate(context.Background(), nil)
	require.NoError(t, r.Err)
	assert.True(t, r.Decision.Allowed)
	assert.Equal(t, "", r.Decision.BlockedBy())
	assert.Equal(t, []string{"Alpha", "Beta"}, []string{r.Decision.Denials[0].Code, r.Decision.Denials[1].Code})
}

func TestAdminSources(t *testing.T) {
	const window = `package tollgate.upgrade

# METADATA
# title: Upgrades wait for the maintenance window
# custom:
#   code: OutsideMaintenanceWindow
deny contains d if {
	not input.inWindow
	d := {"code": rego.metadata.rule().custom.code, "message": "outside the window", "overridden": false}
}
`
	tests := []struct {
		scenario string
		opts     engine.Options
		input    map[string]any
		codes    []string
		source   string
	}{{
		scenario: "an admin module with the path of an embedded file replaces it",
		opts:     engine.Options{Modules: []engine.Module{{Path: "upgrade/upgrade.rego", Source: window}}},
		input:    map[string]any{"upgradeable": false},
		codes:    []string{"OutsideMaintenanceWindow"},
		source:   fmt.Sprintf("upgrade/upgrade.rego:%d (deny: Upgrades wait for the maintenance window)", rowOf(t, window, "deny contains")),
	}, {
		scenario: "an admin module beside the embedded ones adds its denials",
		opts:     engine.Options{Modules: []engine.Module{{Path: "packs/window.rego", Source: window}}},
		input:    map[string]any{"name": "etcd", "upgradeable": false},
		codes:    []string{"OperatorNotUpgradeable", "OutsideMaintenanceWindow"},
	}, {
		scenario: "admin data under data.tollgate.config disables a code",
		opts:     engine.Options{Data: map[string]any{"disabledCodes": []string{"OperatorNotUpgradeable"}}},
		input:    map[string]any{"upgradeable": false},
		codes:    nil,
	}, {
		scenario: "a bundle's modules and data are loaded",
		opts: engine.Options{Bundles: []*bundle.Bundle{{
			Data:    map[string]any{"tollgate": map[string]any{"config": map[string]any{"disabledCodes": []any{"OperatorNotUpgradeable"}}}},
			Modules: []bundle.ModuleFile{{Path: "/packs/window.rego", Raw: []byte(window)}},
		}}},
		input:  map[string]any{"upgradeable": false},
		codes:  []string{"OutsideMaintenanceWindow"},
		source: fmt.Sprintf("packs/window.rego:%d (deny: Upgrades wait for the maintenance window)", rowOf(t, window, "deny contains")),
	}, {
		scenario: "admin test modules are not loaded",
		opts:     engine.Options{Modules: []engine.Module{{Path: "packs/window_test.rego", Source: "not rego"}}},
		input:    map[string]any{"upgradeable": true},
		codes:    nil,
	}}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			r := newEngine(t, tt.opts).Evaluate(context.Background(), tt.input)
			require.NoError(t, r.Err)
			var codes []string
			for _, d := range r.Decision.Denials {
				codes = append(codes, d.Code)
			}
			assert.Equal(t, tt.codes, codes)
			assert.Equal(t, len(tt.codes) == 0, r.Decision.Allowed)
			if tt.source != "" {
				assert.Equal(t, tt.source, r.Decision.Denials[0].Source)
			}
		})
	}
}

func TestRevision(t *testing.T) {
	base := newEngine(t, engine.Options{}).Revision()
	assert.Regexp(t, `^[0-9a-f]{12}$`, base)
	assert.Equal(t, base, newEngine(t, engine.Options{}).Revision(), "same sources, same revision")

	changed := map[string]engine.Options{
		"an added module":  {Modules: []engine.Module{{Path: "packs/x.rego", Source: "package tollgate.packs\n"}}},
		"a replaced file":  {Modules: []engine.Module{{Path: "upgrade/upgrade.rego", Source: testUpgrade + "\n# edited\n"}}},
		"different data":   {Data: map[string]any{"disabledCodes": []string{"X"}}},
		"a longer timeout": {Timeout: time.Minute},
	}
	for name, opts := range changed {
		got := newEngine(t, opts).Revision()
		if name == "a longer timeout" {
			assert.Equal(t, base, got, "the timeout is not policy")
			continue
		}
		assert.NotEqual(t, base, got, name)
	}
}

func TestEvaluateConcurrently(t *testing.T) {
	e := newEngine(t, engine.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				up := (g+i)%2 == 0
				r := e.Evaluate(context.Background(), map[string]any{"name": fmt.Sprint(g), "upgradeable": up})
				if r.Err != nil || r.Decision.Allowed != up {
					errs <- fmt.Errorf("goroutine %d eval %d: allowed=%v err=%w", g, i, r.Decision.Allowed, r.Err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestExplain(t *testing.T) {
	e := newEngine(t, engine.Options{})
	ex, err := e.Explain(context.Background(), map[string]any{"name": "etcd", "upgradeable": false})
	require.NoError(t, err)
	row := rowOf(t, testUpgrade, "deny contains d if")
	want := []engine.ExplainedDenial{{
		Denial: engine.Denial{Denial: tollgatev1alpha1.Denial{
			Code:    "OperatorNotUpgradeable",
			Message: "etcd is migrating",
			Source:  fmt.Sprintf("upgrade/upgrade.rego:%d (deny: The operator says it must not be upgraded now)", row),
		}},
		File:        "upgrade/upgrade.rego",
		Row:         row,
		Rule:        "deny",
		Title:       "The operator says it must not be upgraded now",
		Description: "Mirrors OperatorCondition Upgradeable=False.",
	}}
	assert.Empty(t, cmp.Diff(want, ex.Denials))
	var msgs []string
	for _, n := range ex.Notes {
		msgs = append(msgs, n.Kind+" "+n.Location+" "+n.Message)
	}
	assert.Contains(t, msgs, fmt.Sprintf("print upgrade/upgrade.rego:%d operator etcd is not upgradeable", rowOf(t, testUpgrade, "print(")))
	assert.Contains(t, msgs, fmt.Sprintf("trace upgrade/upgrade.rego:%d upgradeable is false", rowOf(t, testUpgrade, "trace(")))

	// A failed evaluation still explains itself.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ex, err = e.Explain(ctx, nil)
	require.ErrorIs(t, err, engine.ErrDeadline)
	require.NotNil(t, ex)
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, ex.Denials[0].Code)
}

func TestDigest(t *testing.T) {
	a := map[string]any{"apiVersion": "tollgate.dev/input/v1", "now": "2024-01-01T00:00:00Z", "subscription": map[string]any{"b": 1, "a": []any{"x"}}}
	b := map[string]any{"subscription": map[string]any{"a": []any{"x"}, "b": 1}, "now": "2025-06-01T00:00:00Z", "apiVersion": "tollgate.dev/input/v1"}
	c := map[string]any{"subscription": map[string]any{"a": []any{"y"}, "b": 1}, "now": "2025-06-01T00:00:00Z", "apiVersion": "tollgate.dev/input/v1"}
	assert.Equal(t, engine.Digest(a), engine.Digest(b), "time and key order do not matter")
	assert.NotEqual(t, engine.Digest(a), engine.Digest(c), "state does")
	assert.Regexp(t, `^[0-9a-f]{64}$`, engine.Digest(a))

	gate := func(mode string, denials int) map[string]any {
		return map[string]any{"gate": map[string]any{
			"metadata": map[string]any{"namespace": "ns", "name": "etcd", "generation": int64(1), "resourceVersion": fmt.Sprint(denials)},
			"spec":     map[string]any{"mode": mode},
			"status":   map[string]any{"decision": map[string]any{"denials": make([]any, denials)}},
		}}
	}
	assert.Equal(t, engine.Digest(gate("Enforce", 0)), engine.Digest(gate("Enforce", 2)), "the gate's status is Tollgate's own output")
	assert.NotEqual(t, engine.Digest(gate("Enforce", 0)), engine.Digest(gate("Audit", 0)), "the gate's spec is input")
}

func TestCompileErrorFormatting(t *testing.T) {
	err := &engine.CompileError{Items: []engine.CompileErrorItem{{File: "a.rego", Row: 3, Col: 1, Message: "boom"}}}
	assert.True(t, errors.Is(err, engine.ErrCompile))
	assert.Contains(t, err.Error(), "a.rego:3:1: boom")
}

func TestSourceNamesTheRuleThatDenied(t *testing.T) {
	const twoRules = `package tollgate.upgrade

# METADATA
# title: First reason
# custom:
#   code: Shared
deny contains {"code": "Shared", "message": "first", "overridden": false} if input.first

# METADATA
# title: Second reason
# custom:
#   code: Shared
deny contains {"code": "Shared", "message": "second", "overridden": false, "title": rego.metadata.rule().title} if input.second
`
	policies := testPolicies()
	policies["upgrade/upgrade.rego"] = &fstest.MapFile{Data: []byte(twoRules)}
	e := newEngine(t, engine.Options{Policies: policies})

	r := e.Evaluate(context.Background(), map[string]any{"second": true})
	require.NoError(t, r.Err)
	require.Len(t, r.Decision.Denials, 1)
	assert.Equal(t, fmt.Sprintf("upgrade/upgrade.rego:%d (deny: Second reason)", rowOf(t, twoRules, `"second"`)), r.Decision.Denials[0].Source,
		"a denial that reports its rule's title is traced to that rule")

	r = e.Evaluate(context.Background(), map[string]any{"first": true})
	require.NoError(t, r.Err)
	assert.Equal(t, fmt.Sprintf("upgrade/upgrade.rego:%d (deny: First reason)", rowOf(t, twoRules, `"first"`)), r.Decision.Denials[0].Source,
		"without a title, the first rule with the code")
}
