package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// factFinder reads the input document a decision was made on, to name the facts each denial
// rests on and what would lift it. It works on the document (plain JSON data), so it explains
// exactly what the policies saw.
type factFinder struct {
	doc map[string]any
	// validation is the policies' verdict on the visible catalogs.
	validation []engine.CatalogValidation
	gate       *tollgatev1alpha1.UpgradeGate
	ns         string
	name       string
	now        time.Time
}

func (f *factFinder) explain(d engine.ExplainedDenial) explainedDenial {
	x := explainedDenial{Code: d.Code, Message: d.Message, Overridden: d.Overridden,
		Rule: d.Rule, Title: d.Title, File: d.File, Row: d.Row, Facts: []string{}, Lift: []remedy{}}
	if d.Overridden {
		if o := f.override(d.Code); o != nil {
			x.OverrideReason = o.Reason
			x.Facts = append(x.Facts, "waived by the UpgradeGate override: "+o.Reason+expiry(o, f.now))
		}
		return x
	}
	switch d.Code {
	case tollgatev1alpha1.CodeOperatorNotUpgradeable, tollgatev1alpha1.CodeOperatorConditionStale, tollgatev1alpha1.CodeOperatorUpgrading:
		f.operatorCondition(&x)
	case tollgatev1alpha1.CodeOperatorDegraded:
		f.health(&x, "Degraded", "True", "the operands must report Degraded=False: fix %s, or wait for it to heal")
	case tollgatev1alpha1.CodeOperatorProgressing:
		f.health(&x, "Progressing", "True", "wait until the operands finish their work and report Progressing=False (%s)")
	case tollgatev1alpha1.CodeCatalogSourceUnhealthy, tollgatev1alpha1.CodeCatalogSourceInvalid:
		f.catalog(&x)
	case tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator:
		f.peers(&x)
	case tollgatev1alpha1.CodePolicyError:
		x.Facts = append(x.Facts, "the policies could not decide, so nothing is approved (fail closed)")
		x.Lift = append(x.Lift, remedy{Text: "fix the policy (PolicyError cannot be overridden): each policy ConfigMap says what is wrong in its tollgate.dev/policy-status annotation; run with --trace for the policies' notes",
			Command: "kubectl get configmaps -n tollgate-system -l tollgate.dev/policy -o yaml"})
		return x // PolicyError cannot be overridden
	default:
		x.Facts = append(x.Facts, fmt.Sprintf("evaluated at %s", f.now.UTC().Format(time.RFC3339)))
		if d.Description != "" {
			x.Facts = append(x.Facts, "the rule: "+strings.Join(strings.Fields(d.Description), " "))
		}
		x.Lift = append(x.Lift, remedy{Text: "the condition this rule checks must stop holding (see the rule and its policy pack's configuration)"})
	}
	x.Lift = append(x.Lift, remedy{Text: "or an admin waives it for this Subscription, with a reason (add \"expires\" to make it temporary):", Command: f.overridePatch(d.Code)})
	return x
}

// operatorCondition states the OperatorCondition's Upgradeable/Upgrading as the policies read it.
func (f *factFinder) operatorCondition(x *explainedDenial) {
	oc := obj(f.doc["operatorCondition"])
	installed := str(f.doc, "subscription", "status", "installedCSV")
	if oc == nil {
		x.Facts = append(x.Facts, fmt.Sprintf("no OperatorCondition named %s in %s", installed, f.ns))
		return
	}
	name := str(oc, "metadata", "name")
	key := f.ns + "/" + name
	generation := num(oc, "metadata", "generation")
	want := "Upgradeable"
	if x.Code == tollgatev1alpha1.CodeOperatorUpgrading {
		want = "Upgrading"
	}
	for _, c := range conds(oc, "spec", "overrides") {
		if str(c, "type") == want {
			x.Facts = append(x.Facts, fmt.Sprintf("OperatorCondition %s: spec.overrides sets %s=%s (an admin override): %s", name, want, str(c, "status"), said(c)))
			x.Lift = append(x.Lift, remedy{Text: fmt.Sprintf("an admin removes or changes the %s override in spec.overrides of OperatorCondition %s:", want, key),
				Command: fmt.Sprintf("kubectl edit operatorcondition -n %s %s", f.ns, name)})
			return
		}
	}
	status := conds(oc, "status", "conditions")
	var found map[string]any
	for _, c := range status {
		if str(c, "type") == want {
			found = c
		}
	}
	if found == nil {
		for _, c := range conds(oc, "spec", "conditions") {
			if str(c, "type") == want {
				x.Facts = append(x.Facts, fmt.Sprintf("OperatorCondition %s: spec.conditions sets %s=%s, but status.conditions has no %s yet", name, want, str(c, "status"), want))
			}
		}
		x.Lift = append(x.Lift, remedy{Text: "OLM copies the operator's spec.conditions to status.conditions; if it does not, check that OLM's olm-operator is running"})
		return
	}
	fact := fmt.Sprintf("OperatorCondition %s: %s=%s%s: %s", name, want, str(found, "status"), since(str(found, "lastTransitionTime"), f.now), said(found))
	observed := num(found, "observedGeneration")
	if observed != generation {
		fact += fmt.Sprintf(" (observed at generation %d; the object is at generation %d)", observed, generation)
	}
	x.Facts = append(x.Facts, fact)
	switch x.Code {
	case tollgatev1alpha1.CodeOperatorNotUpgradeable:
		x.Lift = append(x.Lift, remedy{Text: fmt.Sprintf("the operator reports Upgradeable=True (or removes the condition) in OperatorCondition %s once it is safe to upgrade; OLM copies spec.conditions to status.conditions", key)})
	case tollgatev1alpha1.CodeOperatorConditionStale:
		x.Lift = append(x.Lift, remedy{Text: fmt.Sprintf("OLM copies the operator's latest conditions (generation %d) to status.conditions; if it does not, check that OLM's olm-operator is running", generation)})
	case tollgatev1alpha1.CodeOperatorUpgrading:
		x.Lift = append(x.Lift, remedy{Text: fmt.Sprintf("the operator reports Upgrading=False in OperatorCondition %s when its own upgrade work is done", key)})
	}
}

// health names the operands whose condition t has the worst status.
func (f *factFinder) health(x *explainedDenial, t, worst, lift string) {
	var names []string
	for _, o := range list(f.doc["operands"]) {
		for _, c := range conds(o, "status", "conditions") {
			if str(c, "type") == t && str(c, "status") == worst {
				id := fmt.Sprintf("%s %s/%s", str(o, "kind"), str(o, "metadata", "namespace"), str(o, "metadata", "name"))
				names = append(names, id)
				x.Facts = append(x.Facts, fmt.Sprintf("%s: %s=%s%s: %s", id, t, worst, since(str(c, "lastTransitionTime"), f.now), said(c)))
			}
		}
	}
	if len(names) == 0 {
		x.Facts = append(x.Facts, fmt.Sprintf("the operands' aggregated %s is %s (see the health table)", t, worst))
		names = []string{"the operands"}
	}
	x.Lift = append(x.Lift, remedy{Text: fmt.Sprintf(lift, strings.Join(names, ", "))})
}

// catalog states the source catalog's existence, connection state and validity.
func (f *factFinder) catalog(x *explainedDenial) {
	sub := f.doc["subscription"]
	key := orDefault(str(sub, "spec", "sourceNamespace"), f.ns) + "/" + str(sub, "spec", "source")
	cs := obj(f.doc["sourceCatalog"])
	patchSource := fmt.Sprintf("kubectl patch subscription -n %s %s --type merge -p '{\"spec\":{\"source\":\"NAME\",\"sourceNamespace\":\"NAMESPACE\"}}'", f.ns, f.name)
	if cs == nil {
		x.Facts = append(x.Facts, fmt.Sprintf("CatalogSource %s does not exist", key))
		x.Lift = append(x.Lift, remedy{Text: "create the CatalogSource " + key + ", or point the Subscription at an existing catalog:", Command: patchSource})
		return
	}
	if x.Code == tollgatev1alpha1.CodeCatalogSourceInvalid {
		for _, v := range f.violations(key) {
			x.Facts = append(x.Facts, fmt.Sprintf("CatalogSource %s: %s %s", key, v.Field, v.Message))
		}
		x.Lift = append(x.Lift, remedy{Text: "fix the CatalogSource's spec as the facts say:",
			Command: fmt.Sprintf("kubectl edit catalogsource -n %s %s", str(cs, "metadata", "namespace"), str(cs, "metadata", "name"))})
		return
	}
	state := str(cs, "status", "connectionState", "lastObservedState")
	if state == "" {
		x.Facts = append(x.Facts, fmt.Sprintf("CatalogSource %s has no status.connectionState yet", key))
	} else {
		fact := fmt.Sprintf("CatalogSource %s: connection %s", key, state)
		if last := str(cs, "status", "connectionState", "lastConnect"); last != "" {
			fact += ", last connected " + stamp(last, f.now)
		}
		if addr := str(cs, "status", "connectionState", "address"); addr != "" {
			fact += ", registry at " + addr
		}
		x.Facts = append(x.Facts, fact)
	}
	x.Lift = append(x.Lift, remedy{Text: "OLM must reach the catalog's registry (status.connectionState.lastObservedState READY): check the catalog's registry pod or address"},
		remedy{Text: "or point the Subscription at a healthy catalog:", Command: patchSource})
}

// violations are the problems the policies found in the catalog key.
func (f *factFinder) violations(key string) []engine.Violation {
	for _, v := range f.validation {
		if v.Namespace+"/"+v.Name == key {
			return v.Violations
		}
	}
	return nil
}

// peers names the other operators a pending plan installs and why each blocks.
func (f *factFinder) peers(x *explainedDenial) {
	var explain []remedy
	for _, p := range list(f.doc["installPlanPeers"]) {
		sub := obj(p["subscription"])
		var fact string
		switch {
		case sub == nil:
			fact = fmt.Sprintf("InstallPlan %s also installs %s, which no Subscription in %s wants", str(p, "installPlan"), str(p, "csv"), f.ns)
		case p["evaluated"] != true:
			fact = fmt.Sprintf("InstallPlan %s also installs %s for Subscription %s/%s, which has no decision yet", str(p, "installPlan"), str(p, "csv"), str(sub, "namespace"), str(sub, "name"))
		default:
			var codes []string
			for _, c := range list2(p["blockingCodes"]) {
				codes = append(codes, fmt.Sprint(c))
			}
			if len(codes) == 0 {
				continue // this peer allows
			}
			fact = fmt.Sprintf("InstallPlan %s also installs %s for Subscription %s/%s, which is held by %s", str(p, "installPlan"), str(p, "csv"), str(sub, "namespace"), str(sub, "name"), strings.Join(codes, ", "))
		}
		x.Facts = append(x.Facts, fact)
		if sub != nil {
			explain = append(explain, remedy{Text: fmt.Sprintf("what holds %s/%s:", str(sub, "namespace"), str(sub, "name")),
				Command: fmt.Sprintf("tollgate explain -n %s %s", str(sub, "namespace"), str(sub, "name"))})
		}
	}
	x.Lift = append(x.Lift, remedy{Text: "OLM installs every operator of a plan together, so every CSV of the plan needs a Subscription whose gate allows it; the other operators' holds must lift first"})
	x.Lift = append(x.Lift, slices.CompactFunc(explain, func(a, b remedy) bool { return a == b })...)
}

func (f *factFinder) override(code string) *tollgatev1alpha1.Override {
	if f.gate == nil {
		return nil
	}
	for i := range f.gate.Spec.Overrides {
		if f.gate.Spec.Overrides[i].Code == code {
			return &f.gate.Spec.Overrides[i]
		}
	}
	return nil
}

// overridePatch is the kubectl patch that adds an override of code to the gate. A merge
// patch replaces the whole list, so the gate's other overrides are carried along.
func (f *factFinder) overridePatch(code string) string {
	type override struct {
		Code    string `json:"code"`
		Reason  string `json:"reason"`
		Expires string `json:"expires,omitempty"`
	}
	var list []override
	if f.gate != nil {
		for _, o := range f.gate.Spec.Overrides {
			if o.Code == code {
				continue // an expired override of this code is replaced
			}
			e := override{Code: o.Code, Reason: o.Reason}
			if o.Expires != nil {
				e.Expires = o.Expires.UTC().Format(time.RFC3339)
			}
			list = append(list, e)
		}
	}
	list = append(list, override{Code: code, Reason: "<why this upgrade is safe anyway>"})
	sort.SliceStable(list, func(i, j int) bool { return list[i].Code < list[j].Code })
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"overrides": list}})
	// Keep the placeholder readable: encoding/json escapes < and >.
	p := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(b))
	return fmt.Sprintf("kubectl patch upgradegate -n %s %s --type merge -p '%s'", f.ns, f.name, p)
}

func expiry(o *tollgatev1alpha1.Override, now time.Time) string {
	if o.Expires == nil {
		return ""
	}
	return " (expires " + stamp(o.Expires.UTC().Format(time.RFC3339), now) + ")"
}

// since is " since <time> (<age> ago)", or "" without a time.
func since(ts string, now time.Time) string {
	if ts == "" {
		return ""
	}
	return " since " + stamp(ts, now)
}

// stamp is a time for a person: minutes precision in UTC, and how long ago or ahead it is.
func stamp(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return ts
	}
	layout := "2006-01-02T15:04Z07:00"
	if t.Second() != 0 {
		layout = time.RFC3339
	}
	s := t.UTC().Format(layout)
	switch d := now.Sub(t); {
	case d >= time.Minute:
		s += " (" + age(d) + " ago)"
	case d <= -time.Minute:
		s += " (in " + age(-d) + ")"
	}
	return s
}

func age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		h := int(d.Hours())
		if m := int(d.Minutes()) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", h, m)
		}
		return fmt.Sprintf("%dh", h)
	default:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
}

// said is a condition's message, else its reason, with the reason alongside.
func said(c map[string]any) string {
	msg, reason := str(c, "message"), str(c, "reason")
	switch {
	case msg != "" && reason != "":
		return fmt.Sprintf("%s (reason %s)", msg, reason)
	case msg != "":
		return msg
	case reason != "":
		return "reason " + reason
	}
	return "no message"
}

// Small readers of JSON data.

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func num(v any, path ...string) int64 {
	switch n := get(v, path...).(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

func list2(v any) []any {
	l, _ := v.([]any)
	return l
}

func list(v any) []map[string]any {
	var out []map[string]any
	for _, it := range list2(v) {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func conds(v any, path ...string) []map[string]any { return list(get(v, path...)) }
