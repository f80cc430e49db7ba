package policysource

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// hostile is a policy an admin might apply by mistake, or an attacker on purpose.
type hostile struct {
	scenario string
	kind     string            // KindRego when empty
	data     map[string]string // the ConfigMap's keys
	// rejected is what the ConfigMap's errors say when it must not go in service; empty when
	// it compiles (and then only evaluation can go wrong).
	rejected string
	noRow    bool // the error names a file but not a row (label, data)
	// etcd is a denial code the decision for etcd must carry (EmergencyHold by default).
	etcd string
	// deadline is the evaluation's time budget when the case is about running past it;
	// zero gives hostileBudget, which a busy machine never reaches on the other cases.
	deadline time.Duration
}

// hostileBudget is the evaluation budget of every case but the one that runs past its
// deadline: the heavy cases (long messages, a huge output) must be judged on what they
// return, not on how busy the machine is.
const hostileBudget = 30 * time.Second

// rego is a one-module ConfigMap's data.
func rego(src string) map[string]string { return map[string]string{"hostile.rego": src} }

// mainRego replaces the embedded main/main.rego.
func mainRego(src string) map[string]string { return map[string]string{"main.rego": src} }

func hostilePolicies() []hostile {
	return []hostile{
		// Rejected when loaded: the error says where.
		{scenario: "a syntax error", data: rego("package tollgate.h\n\ndeny contains d if {\n"), rejected: "unexpected eof"},
		{scenario: "an unsafe variable", data: rego("package tollgate.h\n\ndeny contains d if {\n\td.code == \"X\"\n}\n"), rejected: "var d is unsafe"},
		{scenario: "an unused variable (strict mode)", data: rego("package tollgate.h\n\nx if {\n\ty := 1\n\tinput.a\n}\n"), rejected: "assigned var y unused"},
		{scenario: "an unused import (strict mode)", data: rego("package tollgate.h\n\nimport data.tollgate.lib\n\nx := 1\n"), rejected: "import data.tollgate.lib unused"},
		{scenario: "recursion", data: rego("package tollgate.h\n\na if b\n\nb if a\n"), rejected: "is recursive"},
		{scenario: "conflicting rule kinds", data: rego("package tollgate.h\n\nx := 1\n\nx contains 2\n"), rejected: "conflicting rules"},
		{scenario: "a function defined with two arities", data: rego("package tollgate.h\n\nf(a) := a\n\nf(a, b) := b\n"), rejected: "conflicting rules"},
		{scenario: "a deny conflicting with an embedded deny", data: rego("package tollgate.upgrade\n\ndeny := {\"code\": \"X\"}\n"), rejected: "conflicting rules"},
		{scenario: "http.send", data: rego("package tollgate.h\n\nx := http.send({\"method\": \"get\", \"url\": \"https://example.com\"})\n"), rejected: "http.send is not allowed in Tollgate policies (no network access"},
		{scenario: "net.lookup_ip_addr", data: rego("package tollgate.h\n\nx := net.lookup_ip_addr(\"example.com\")\n"), rejected: "net.lookup_ip_addr is not allowed"},
		{scenario: "opa.runtime", data: rego("package tollgate.h\n\nx := opa.runtime().env\n"), rejected: "opa.runtime is not allowed"},
		{scenario: "rand.intn", data: rego("package tollgate.h\n\ndeny contains {\"code\": \"Dice\", \"message\": \"m\"} if rand.intn(\"x\", 2) == 0\n"), rejected: "rand.intn is not allowed in Tollgate policies (its result is not a function of the input"},
		{scenario: "uuid.rfc4122", data: rego("package tollgate.h\n\nx := uuid.rfc4122(\"k\")\n"), rejected: "the clock is input.now"},
		{scenario: "time.now_ns", data: rego("package tollgate.h\n\ndeny contains {\"code\": \"Late\", \"message\": \"m\"} if time.now_ns() > 0\n"), rejected: "time.now_ns is not allowed in Tollgate policies (its result is not a function of the input, so decisions could not be replayed; the clock is input.now"},
		{scenario: "io.jwt.decode_verify (reads the clock)", data: rego("package tollgate.h\n\nx := io.jwt.decode_verify(\"t\", {\"secret\": \"s\"})\n"), rejected: "io.jwt.decode_verify is not allowed"},
		{scenario: "a deny in a deeper package", data: rego(holdModule("tollgate.packs.acme.window", "AcmeWindow", "etcd")), rejected: "data.tollgate.packs.acme.window.deny is never collected"},
		{scenario: "a deny three levels under tollgate", data: rego(holdModule("tollgate.site.rules", "SiteRule", "etcd")), rejected: "move it to tollgate.<name> or tollgate.packs.<name>"},
		{scenario: "a deny outside tollgate", data: rego(holdModule("acme", "Acme", "etcd")), rejected: "data.acme.deny is never collected"},
		{scenario: "a deny too deep through a rule reference", data: rego("package tollgate.packs\n\nacme.window.deny contains {\"code\": \"X\", \"message\": \"m\"}\n"), rejected: "data.tollgate.packs.acme.window.deny is never collected"},
		{scenario: "a deny that is a function", data: rego("package tollgate.h\n\ndeny(x) := {\"code\": x, \"message\": x}\n"), rejected: "is a function"},
		{scenario: "a main without the entry point", data: mainRego("package tollgate.main\n\nallowed := true\n"), rejected: "no rule defines data.tollgate.main.result"},
		{scenario: "a main in another package", data: mainRego("package tollgate.notmain\n\nresult := {}\n"), rejected: "no rule defines data.tollgate.main.result"},
		{scenario: "a key that is not a Rego file", data: map[string]string{"notes.txt": "package tollgate.h\n"}, rejected: "must be relative, slash-separated and end in .rego", noRow: true},
		{scenario: "data that is not an object", kind: KindData, data: map[string]string{"d.yaml": "- a\n- b\n"}, rejected: "not a JSON or YAML object", noRow: true},
		{scenario: "a policy label of an unknown kind", kind: "yes", data: rego("package tollgate.h\n"), rejected: `use "rego" (Rego modules) or "data" (data)`, noRow: true},

		// Compiles; the decisions are still never an approval the good policy would deny.
		{scenario: "a deny that is a string", data: rego("package tollgate.h\n\ndeny := \"hold everything\"\n"), etcd: "PolicyError"},
		{scenario: "a malformed denial", data: rego("package tollgate.h\n\ndeny contains {\"reason\": \"no code\"}\n"), etcd: "PolicyError"},
		{scenario: "a built-in error that could hide a denial", data: rego("package tollgate.h\n\ndeny contains {\"code\": \"Num\", \"message\": \"m\"} if to_number(input.subscription.metadata.name) > 1\n")},
		{scenario: "a conflict at evaluation", data: rego("package tollgate.h\n\nx := 1 if input.subscription\n\nx := 2 if input.now\n\ndeny contains {\"code\": \"X\", \"message\": \"m\"} if x == 1\n"), etcd: "PolicyError"},
		{scenario: "a run past the deadline", data: rego("package tollgate.h\n\ndeny contains {\"code\": \"Slow\", \"message\": \"m\"} if {\n\tcount([1 | some i in numbers.range(1, 100000); some j in numbers.range(1, 100000); i == j + 1]) < 0\n}\n"), etcd: "PolicyError", deadline: time.Second},
		{scenario: "many denials with long messages", data: rego("package tollgate.h\n\n_long := concat(\"\", [\"x\" | some _ in numbers.range(1, 5000)])\n\n" +
			"deny contains {\"code\": sprintf(\"Many%04d\", [i]), \"message\": _long, \"facts\": [_long | some _ in numbers.range(1, 20)]} if some i in numbers.range(1, 40)\n")},
		{scenario: "a huge output", data: rego("package tollgate.h\n\n_long := concat(\"\", [\"x\" | some _ in numbers.range(1, 20000)])\n\n" +
			"deny contains {\"code\": sprintf(\"Huge%04d\", [i]), \"message\": _long, \"facts\": [_long | some _ in numbers.range(1, 50)]} if some i in numbers.range(1, 300)\n"), etcd: "PolicyError"},
		{scenario: "a main that overrides PolicyError", data: mainRego(`package tollgate.main

result := {"decision": {"allowed": true, "denials": [{"code": "PolicyError", "message": "trust me", "overridden": true, "overrideReason": "no"}]}}
`), etcd: "PolicyError"},
		{scenario: "a main that overrides InstallPlanIncludesBlockedOperator", data: mainRego(`package tollgate.main

result := {"decision": {"allowed": true, "denials": [{"code": "InstallPlanIncludesBlockedOperator", "message": "peer held", "overridden": true}]}}
`), etcd: "InstallPlanIncludesBlockedOperator"},
		{scenario: "a main that allows with a standing denial", data: mainRego(`package tollgate.main

result := {"decision": {"allowed": true, "denials": [{"code": "EmergencyHold", "message": "held", "overridden": false}]}}
`)},
		{scenario: "a main whose result has the wrong type", data: mainRego("package tollgate.main\n\nresult := \"allowed\"\n"), etcd: "PolicyError"},
		{scenario: "a main whose allowed is a string", data: mainRego("package tollgate.main\n\nresult := {\"decision\": {\"allowed\": \"true\", \"denials\": []}}\n"), etcd: "PolicyError"},
		{scenario: "data of the wrong shape", kind: KindData, data: map[string]string{"d.yaml": "disabledCodes: EmergencyHold\n"}},
		{scenario: "data that disables PolicyError", kind: KindData, data: map[string]string{"d.yaml": "disabledCodes: [PolicyError]\n"}},
	}
}

// TestHostilePolicies applies each hostile policy beside an emergency deny, both as a new
// ConfigMap and as an edit of the site ConfigMap in service. Whatever it is: nothing panics,
// the emergency deny goes in, a rejected policy's error says where, a rejected edit leaves
// its last good version in force, and etcd (which the emergency deny holds) is never allowed.
func TestHostilePolicies(t *testing.T) {
	cases := hostilePolicies()
	require.GreaterOrEqual(t, len(cases), 30)
	ctx := context.Background()
	opts := embeddedBase
	opts.Timeout = hostileBudget
	first, err := Resolve(ctx, opts, []corev1.ConfigMap{site}, Versions{})
	require.NoError(t, err)
	for _, tt := range cases {
		for _, edit := range []bool{false, true} {
			name, how := "hostile", "as a new ConfigMap"
			if edit {
				name, how = "site", "as an edit of a ConfigMap in service"
			}
			t.Run(tt.scenario+" "+how, func(t *testing.T) {
				t.Parallel() // Resolve and the engines are pure
				cm := policyCM(name, cmp(tt.kind, KindRego), tt.data)
				cms := []corev1.ConfigMap{emergency, cm}
				if !edit {
					cms = append(cms, site)
				}
				opts := opts
				if tt.deadline != 0 {
					opts.Timeout = tt.deadline
				}
				res, err := Resolve(ctx, opts, cms, first.Served)
				require.NoError(t, err)
				require.NotNil(t, res.Engine, "the other sources' changes go in")
				assert.Equal(t, SourceStatus{Serving: ServingCurrent}, res.Sources["emergency"])
				checkHostile(t, tt, res, name, edit)
				etcd := res.Engine.Evaluate(ctx, firstInstall("etcd"))
				assert.False(t, etcd.Decision.Allowed, "never an approval the good policy would deny")
				assert.Contains(t, codes(etcd), cmp(tt.etcd, "EmergencyHold"))
				assert.LessOrEqual(t, len(etcd.Decision.Denials), engine.MaxDenials)
				for _, d := range etcd.Decision.Denials {
					assert.LessOrEqual(t, len(d.Message), engine.MaxText)
					assert.LessOrEqual(t, len(d.Facts), 16)
				}
				res.Engine.Evaluate(ctx, firstInstall("mysql")) // decisions continue
			})
		}
	}
}

func checkHostile(t *testing.T, tt hostile, res *Resolution, name string, edit bool) {
	t.Helper()
	st := res.Sources[name]
	if tt.rejected == "" {
		assert.Equal(t, SourceStatus{Serving: ServingCurrent}, st, "it compiles, so it is in service")
		return
	}
	want := ServingNone
	if edit {
		want = ServingPrevious
		mysql := res.Engine.Evaluate(context.Background(), firstInstall("mysql"))
		assert.Equal(t, []string{"SiteHold"}, codes(mysql), "the last good version of site stays in force")
	}
	assert.Equal(t, want, st.Serving)
	require.NotEmpty(t, st.Errors)
	var messages []string
	for _, it := range st.Errors {
		messages = append(messages, it.String())
	}
	all := strings.Join(messages, "\n")
	assert.Contains(t, all, tt.rejected)
	item := st.Errors[0]
	if tt.kind == "" { // a module: the error names its file
		assert.NotEmpty(t, item.File, all)
	}
	if !tt.noRow {
		assert.Positive(t, item.Row, all)
	}
	if strings.Contains(tt.rejected, "never collected") || strings.Contains(tt.rejected, "is not allowed") {
		assert.Equal(t, "configmap/"+name+"/hostile.rego", item.File, "the error names the ConfigMap's own file")
	}
}

func cmp(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// TestANotOverridableDenialNeverLetsAnUpgradeThrough checks the engine's own guarantee on the
// decision a replaced main returns.
func TestANotOverridableDenialNeverLetsAnUpgradeThrough(t *testing.T) {
	for _, code := range []string{tollgatev1alpha1.CodePolicyError, tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator} {
		main := policyCM("main", KindRego, mainRego(`package tollgate.main

result := {"decision": {"allowed": true, "denials": [{"code": "`+code+`", "message": "m", "overridden": true, "overrideReason": "because"}]}}
`))
		res := inService(t, main)
		r := res.Engine.Evaluate(context.Background(), firstInstall("etcd"))
		assert.False(t, r.Decision.Allowed)
		require.Len(t, r.Decision.Denials, 1)
		d := r.Decision.Denials[0]
		assert.False(t, d.Overridden)
		assert.Empty(t, d.OverrideReason)
		assert.Equal(t, code, r.Decision.BlockedBy())
		assert.Contains(t, d.Facts, "the policy marked this "+code+" denial overridden, but "+code+" cannot be overridden: it stands")
	}
}
