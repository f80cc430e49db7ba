package engine_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// The contract holds for every source: the base set (embedded, or --policy-dir given as
// Options.Policies), bundles and admin modules alike.
func TestTheContractIsCheckedInEverySource(t *testing.T) {
	const dice = "package tollgate.dice\n\nx := rand.intn(\"k\", 6)\n"
	const deep = "package tollgate.packs.acme.window\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n"
	withBase := func(path, src string) engine.Options {
		fs := testPolicies()
		fs[path] = &fstest.MapFile{Data: []byte(src)}
		return engine.Options{Policies: fs}
	}
	withBundle := func(path, src string) engine.Options {
		return engine.Options{Policies: testPolicies(), Bundles: []*bundle.Bundle{{
			Manifest: bundle.Manifest{Revision: "r"},
			Modules:  []bundle.ModuleFile{{Path: "/" + path, Raw: []byte(src)}},
		}}}
	}
	withModule := func(path, src string) engine.Options {
		return engine.Options{Policies: testPolicies(), Modules: []engine.Module{{Path: path, Source: src}}}
	}
	for how, opts := range map[string]func(path, src string) engine.Options{
		"in the base set (embedded or --policy-dir)": withBase,
		"in a bundle":        withBundle,
		"in an admin module": withModule,
	} {
		t.Run("a non-deterministic built-in "+how, func(t *testing.T) {
			item := compileErrorItem(t, opts("dice/dice.rego", dice))
			assert.Equal(t, "dice/dice.rego", item.File)
			assert.Equal(t, 3, item.Row)
			assert.Contains(t, item.Message, "rand.intn is not allowed in Tollgate policies")
			assert.Contains(t, item.Message, "the clock is input.now")
		})
		t.Run("a deny that is never collected "+how, func(t *testing.T) {
			item := compileErrorItem(t, opts("acme/window.rego", deep))
			assert.Equal(t, "acme/window.rego", item.File)
			assert.Equal(t, 3, item.Row)
			assert.Contains(t, item.Message, "data.tollgate.packs.acme.window.deny is never collected")
			assert.Contains(t, item.Message, "move it to tollgate.<name> or tollgate.packs.<name>")
		})
	}
}

func compileErrorItem(t *testing.T, opts engine.Options) engine.CompileErrorItem {
	t.Helper()
	e, err := engine.New(context.Background(), opts)
	require.Nil(t, e)
	var ce *engine.CompileError
	require.ErrorAs(t, err, &ce)
	require.Len(t, ce.Items, 1, "%v", ce)
	return ce.Items[0]
}

func TestEveryNonDeterministicBuiltInIsRefused(t *testing.T) {
	calls := map[string]string{
		"rand.intn":            `rand.intn("k", 2)`,
		"uuid.rfc4122":         `uuid.rfc4122("k")`,
		"time.now_ns":          `time.now_ns()`,
		"http.send":            `http.send({"method": "get", "url": "https://example.com"})`,
		"net.lookup_ip_addr":   `net.lookup_ip_addr("example.com")`,
		"opa.runtime":          `opa.runtime()`,
		"io.jwt.decode_verify": `io.jwt.decode_verify("t", {"secret": "s"})`,
		"io.jwt.encode_sign":   `io.jwt.encode_sign({"alg": "HS256"}, {}, {"kty": "oct", "k": "AA"})`,
		"json.match_schema":    `json.match_schema({}, {})`,
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			item := compileErrorItem(t, engine.Options{Policies: testPolicies(), Modules: []engine.Module{
				{Path: "admin/call.rego", Source: "package tollgate.admin\n\nx := " + call + "\n"}}})
			assert.Equal(t, "admin/call.rego", item.File)
			assert.Equal(t, 3, item.Row)
			assert.True(t, strings.HasPrefix(item.Message, name+" is not allowed in Tollgate policies ("), item.Message)
		})
	}
}

func TestDenyPlacement(t *testing.T) {
	tests := []struct {
		scenario string
		src      string
		refused  string // empty: it compiles
	}{
		{"tollgate.<name>", "package tollgate.site\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n", ""},
		{"tollgate.packs.<name>", "package tollgate.packs.acme\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n", ""},
		{"tollgate.packs.<name> through a rule reference", "package tollgate.packs\n\nacme.deny contains {\"code\": \"X\", \"message\": \"m\"}\n", ""},
		{"a helper named like deny", "package tollgate.site.lib\n\ndeny_reasons := {\"x\"}\n", ""},
		{"tollgate itself", "package tollgate\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n", "data.tollgate.deny is never collected"},
		{"three levels under tollgate", "package tollgate.site.rules\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n", "data.tollgate.site.rules.deny is never collected"},
		{"four levels under tollgate.packs", "package tollgate.packs.acme.window\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n", "data.tollgate.packs.acme.window.deny is never collected"},
		{"outside tollgate", "package acme\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"}\n", "data.acme.deny is never collected"},
		{"a function", "package tollgate.site\n\ndeny(x) := x\n", "data.tollgate.site.deny is a function"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			opts := engine.Options{Policies: testPolicies(), Modules: []engine.Module{{Path: "admin/deny.rego", Source: tt.src}}}
			if tt.refused == "" {
				_, err := engine.New(context.Background(), opts)
				require.NoError(t, err)
				return
			}
			item := compileErrorItem(t, opts)
			assert.Equal(t, "admin/deny.rego", item.File)
			assert.Equal(t, 3, item.Row)
			assert.Contains(t, item.Message, tt.refused)
		})
	}
}

func TestAPolicySetWithoutTheEntryPointIsRefused(t *testing.T) {
	fs := testPolicies()
	fs["main/main.rego"] = &fstest.MapFile{Data: []byte("package tollgate.main\n\nallowed := true\n")}
	item := compileErrorItem(t, engine.Options{Policies: fs})
	assert.Equal(t, "main/main.rego", item.File)
	assert.Equal(t, 1, item.Row)
	assert.Contains(t, item.Message, "no rule defines data.tollgate.main.result")
}

func TestEvaluateBoundsWhatAPolicyReturns(t *testing.T) {
	policies := testPolicies()
	policies["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

_long := concat("", ["x" | some _ in numbers.range(1, 10000)])

result := {"decision": {"allowed": false, "denials": [{
	"code": "Long", "message": _long, "overridden": false,
	"facts": [_long | some _ in numbers.range(1, 40)],
	"lift": [{"text": _long, "command": _long} | some _ in numbers.range(1, 20)],
}]}} if not input.huge

result := {"decision": {"allowed": true, "denials": []}, "junk": [_long | some _ in numbers.range(1, 2000)]} if input.huge
`)}
	e := newEngine(t, engine.Options{Policies: policies})
	r := e.Evaluate(context.Background(), map[string]any{})
	require.NoError(t, r.Err)
	d := r.Decision.Denials[0]
	assert.Len(t, d.Message, engine.MaxText)
	assert.True(t, strings.HasSuffix(d.Message, "…"))
	assert.Len(t, d.Facts, 16)
	assert.Equal(t, "(25 more facts left out)", d.Facts[15])
	assert.Len(t, d.Lift, 8)
	assert.Empty(t, d.Lift[0].Command, "a cut command would not be safe to paste")

	huge := e.Evaluate(context.Background(), map[string]any{"huge": true})
	assert.ErrorIs(t, huge.Err, engine.ErrResultShape)
	assert.False(t, huge.Decision.Allowed, "a result too large to read is not an approval")
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, huge.Decision.BlockedBy())
	assert.Contains(t, huge.Decision.Denials[0].Message, "larger than")
}

func TestAPolicyErrorAlwaysStands(t *testing.T) {
	policies := testPolicies()
	policies["main/main.rego"] = &fstest.MapFile{Data: []byte(`package tollgate.main

result := {"decision": {"allowed": true, "denials": array.concat(
	[{"code": "PolicyError", "message": "could not decide", "overridden": true, "overrideReason": "ignore it"}],
	[{"code": sprintf("A%02d", [i]), "message": "m", "overridden": true} | some i in numbers.range(1, 40)],
)}}
`)}
	r := newEngine(t, engine.Options{Policies: policies}).Evaluate(context.Background(), nil)
	require.NoError(t, r.Err)
	assert.False(t, r.Decision.Allowed, "every other denial is waived, but PolicyError cannot be")
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, r.Decision.BlockedBy(), "it stands, so it sorts first and survives the cap")
	assert.Equal(t, 9, r.Decision.Truncated)
}
