package engine

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The load-time checks of the policy contract (policies/README.md): what a policy set may not
// do even though OPA would compile it. Each problem is a CompileErrorItem naming the file and
// row, so a ConfigMap or bundle that breaks the contract is rejected like one that does not
// parse, and the last good policy set stays in service.

// queryRef is Query as a reference, to find the rule that defines it.
var queryRef = ast.MustParseRef(Query)

// refusedBuiltins are the built-ins left out of the capabilities: RestrictedBuiltins and every
// non-deterministic one (ast.Builtin.Nondeterministic: rand.intn, uuid.rfc4122, time.now_ns,
// io.jwt.decode_verify, json.match_schema...). A non-deterministic built-in would make a
// decision impossible to replay from its input document; the clock is input.now.
var refusedBuiltins = func() map[string]string {
	out := map[string]string{}
	for _, b := range ast.CapabilitiesForThisVersion().Builtins {
		if b.Nondeterministic {
			out[b.Name] = "its result is not a function of the input, so decisions could not be replayed; " +
				"the clock is input.now (an RFC 3339 time: time.parse_rfc3339_ns(input.now))"
		}
	}
	for _, name := range RestrictedBuiltins {
		out[name] = "no network access or runtime introspection"
	}
	for _, name := range []string{"http.send", "net.lookup_ip_addr"} {
		out[name] = "no network access, and its result is not a function of the input"
	}
	return out
}()

var undefinedFunction = regexp.MustCompile(`(?:undefined function|unsafe built-in function calls in expression:) ([A-Za-z0-9_.]+)`)

// refusedMessage says plainly that a call is refused by policy rather than unknown, and why.
func refusedMessage(msg string) string {
	m := undefinedFunction.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	why, refused := refusedBuiltins[m[1]]
	if !refused {
		return msg
	}
	return fmt.Sprintf("%s is not allowed in Tollgate policies (%s): %s", m[1], why, msg)
}

// checkContract finds what OPA accepts but the contract forbids, in the parsed modules: a
// `deny` that tollgate.main would never collect, and a missing entry point.
//
// Why reject instead of collecting `deny` at any depth: Rego cannot enumerate packages
// without evaluating them. Collecting at any depth needs walk(data.tollgate) (or a ref with a
// variable per level), which evaluates every rule under data.tollgate, tollgate.main.result
// included: a recursion OPA refuses, and a cost paid on every decision. A check over the
// modules' rules at load time is exact, costs nothing per decision, and can say where the rule
// is and where to move it.
func checkContract(modules map[string]*ast.Module) []CompileErrorItem {
	var items []CompileErrorItem
	entry := false
	for _, p := range slices.Sorted(maps.Keys(modules)) {
		for _, rule := range modules[p].Rules {
			ref := rule.Ref()
			if ref.Equal(queryRef) {
				entry = true
			}
			if msg := denyPlacement(rule, ref); msg != "" {
				items = append(items, ruleItem(p, rule, msg))
			}
		}
	}
	if !entry {
		items = append(items, missingEntryPoint(modules))
	}
	return items
}

// denyPlacement says what is wrong with rule, a rule of ref, when it defines a `deny` that
// tollgate.main does not collect: data.tollgate.<name>.deny and data.tollgate.packs.<name>.deny
// are collected (whatever follows deny: main turns what is not a denial into a PolicyError).
func denyPlacement(rule *ast.Rule, ref ast.Ref) string {
	at := slices.IndexFunc(ref, func(t *ast.Term) bool { return t.Value.Compare(ast.String("deny")) == 0 })
	if at < 1 {
		return ""
	}
	denyRef := ref[:at+1].String()
	if len(rule.Head.Args) > 0 {
		return fmt.Sprintf("%s is a function, but tollgate.main collects deny as a set of denials: write `deny contains denial if { ... }`", denyRef)
	}
	name := func(i int) string {
		s, _ := ref[i].Value.(ast.String)
		return string(s)
	}
	if name(1) == "tollgate" && (at == 3 || at == 4 && name(2) == "packs") {
		return ""
	}
	return fmt.Sprintf("%s is never collected: tollgate.main collects deny only from packages tollgate.<name> and tollgate.packs.<name>, "+
		"so this rule could never deny; move it to tollgate.<name> or tollgate.packs.<name>", denyRef)
}

func ruleItem(path string, rule *ast.Rule, msg string) CompileErrorItem {
	it := CompileErrorItem{File: path, Message: msg}
	if rule.Location != nil {
		it.Row, it.Col = rule.Location.Row, rule.Location.Col
	}
	return it
}

// missingEntryPoint names the module that should define Query: one of package tollgate.main,
// else the file that replaced main/main.rego, else none.
func missingEntryPoint(modules map[string]*ast.Module) CompileErrorItem {
	it := CompileErrorItem{Message: fmt.Sprintf("no rule defines %s, the entry point Tollgate queries: "+
		"a module that replaces main/main.rego must define result (see policies/README.md)", Query)}
	var candidates []string
	for p, m := range modules {
		if m.Package.Path.Equal(queryRef[:len(queryRef)-1]) {
			candidates = append(candidates, p)
		}
	}
	sort.Strings(candidates)
	if _, replaced := modules["main/main.rego"]; len(candidates) == 0 && replaced {
		candidates = []string{"main/main.rego"}
	}
	if len(candidates) > 0 {
		it.File, it.Row = candidates[0], 1
		if loc := modules[candidates[0]].Package.Location; loc != nil {
			it.Row, it.Col = loc.Row, loc.Col
		}
	}
	return it
}
