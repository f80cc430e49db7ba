package approval_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// checkInvariant fails t when v approves plan and the safety invariant does not hold: every
// CSV the plan creates, and every CSV of the namespace it replaces, has an allowing decision,
// on facts the policies saw. It states the invariant a second time, deliberately simply, from
// OLM's semantics and apart from package approval's rules: it reads the plan's manifests and
// properties itself, builds each decision's document with input.Builder and evaluates it with
// d.Policies. For an approved plan:
//
//  1. a Subscription of its namespace lists one of its CSVs as status.currentCSV (OLM made
//     the plan for it, and the manager acts through it);
//  2. every CSV c it lists is allowed: each Subscription whose currentCSV is c is Manual, has a
//     gate in Enforce mode and a decision that allows; or, with none, exactly one Subscription
//     step of the plan starts at c, no Subscription of the namespace follows its package, and
//     the decision on that Subscription as OLM would create it allows, in Enforce mode;
//  3. every CSV r that c replaces (OLM replaces the CSV spec.replaces names, whatever its
//     package: any bundle lookup's replaces for c, any CSV step's spec.replaces) and that
//     exists is no copy, and either every Subscription whose installed CSV is r is Manual,
//     Enforce and allowed (and there is one), or a decision of 2 was made on r (its document's
//     installed or replaced CSV is r);
//  4. no version from a name where the bundle says otherwise: where the plan gives c a bundle
//     version, the documents of 2 carry one of the versions the bundle gives in versions[c].
func checkInvariant(t *testing.T, r client.Reader, d *approval.Decider, plan *v1alpha1.InstallPlan, v approval.Verdict) {
	t.Helper()
	if !v.Approvable {
		return
	}
	o := &oracle{t: t, r: r, d: d, plan: plan}
	subs := o.subscriptions()
	if !slices.ContainsFunc(subs, func(s v1alpha1.Subscription) bool {
		return slices.Contains(plan.Spec.ClusterServiceVersionNames, s.Status.CurrentCSV)
	}) {
		t.Fatalf("invariant: InstallPlan %s is approved, but no Subscription waits on it", plan.Name)
	}
	for _, c := range plan.Spec.ClusterServiceVersionNames {
		docs := o.decisionsOn(c, subs)
		o.replacedAreJudged(c, subs, docs)
		o.versionsFromTheBundle(c, docs)
	}
}

type oracle struct {
	t    *testing.T
	r    client.Reader
	d    *approval.Decider
	plan *v1alpha1.InstallPlan
}

func (o *oracle) subscriptions() []v1alpha1.Subscription {
	var list v1alpha1.SubscriptionList
	if err := o.r.List(context.Background(), &list, client.InNamespace(o.plan.Namespace)); err != nil {
		o.t.Fatal(err)
	}
	return list.Items
}

// decisionsOn checks 2 for c and returns the documents its decisions were made on.
func (o *oracle) decisionsOn(c string, subs []v1alpha1.Subscription) []*input.Document {
	var docs []*input.Document
	for i := range subs {
		if subs[i].Status.CurrentCSV == c {
			docs = append(docs, o.allowedSubscription(&subs[i], c))
		}
	}
	if len(docs) > 0 {
		return docs
	}
	steps := o.subscriptionSteps(c)
	if len(steps) != 1 {
		o.t.Fatalf("invariant: InstallPlan %s is approved, but %s has no Subscription and %d Subscription steps", o.plan.Name, c, len(steps))
	}
	for i := range subs {
		if subs[i].Spec != nil && subs[i].Spec.Package == steps[0].Spec.Package {
			o.t.Fatalf("invariant: InstallPlan %s is approved, but it subscribes to %s for %s, which Subscription %s follows", o.plan.Name, steps[0].Spec.Package, c, subs[i].Name)
		}
	}
	return []*input.Document{o.allowedDependency(steps[0], c)}
}

func (o *oracle) allowedSubscription(sub *v1alpha1.Subscription, c string) *input.Document {
	doc, err := (&input.Builder{Reader: o.r, Config: o.d.Input, Now: o.d.Now}).Build(context.Background(), client.ObjectKeyFromObject(sub))
	if err != nil {
		o.t.Fatal(err)
	}
	o.allowed(doc, c, sub.Spec == nil || sub.Spec.InstallPlanApproval != v1alpha1.ApprovalManual, doc.Gate == nil)
	return doc
}

func (o *oracle) allowedDependency(sub *v1alpha1.Subscription, c string) *input.Document {
	sub.Namespace = o.plan.Namespace
	sub.Status = v1alpha1.SubscriptionStatus{CurrentCSV: c, InstallPlanRef: &corev1.ObjectReference{Namespace: o.plan.Namespace, Name: o.plan.Name}}
	doc, err := (&input.Builder{Reader: o.r, Config: o.d.Input, Now: o.d.Now}).BuildFor(context.Background(), sub)
	if err != nil {
		o.t.Fatal(err)
	}
	o.allowed(doc, c, false, false)
	return doc
}

// allowed fails unless doc's decision allows, its mode is Enforce, it is Manual and it has
// the gate it needs.
func (o *oracle) allowed(doc *input.Document, c string, automatic, gateless bool) {
	res := o.d.Policies.Evaluate(context.Background(), doc.Doc)
	mode := approval.EffectiveMode(doc.Gate, o.d.Input.WithDefaults().DefaultMode)
	if !res.Decision.Allowed || mode != tollgatev1alpha1.ModeEnforce || automatic || gateless {
		o.t.Fatalf("invariant: InstallPlan %s is approved, but the decision of %s on %s is allowed=%v (%v), mode %s, automatic %v, gate %v",
			o.plan.Name, doc.Subscription.Name, c, res.Decision.Allowed, approval.Standing(res.Decision), mode, automatic, !gateless)
	}
}

// subscriptionSteps are the Subscriptions the plan's steps for c would create.
func (o *oracle) subscriptionSteps(c string) []*v1alpha1.Subscription {
	var out []*v1alpha1.Subscription
	for _, s := range o.plan.Status.Plan {
		if s != nil && s.Resolving == c && s.Resource.Kind == "Subscription" {
			sub := &v1alpha1.Subscription{}
			if err := json.Unmarshal([]byte(s.Resource.Manifest), sub); err != nil || sub.Spec == nil {
				o.t.Fatalf("invariant: InstallPlan %s is approved with a Subscription step for %s that does not parse", o.plan.Name, c)
			}
			sub.Name = s.Resource.Name
			out = append(out, sub)
		}
	}
	return out
}

// replacedAreJudged checks 3 for c.
func (o *oracle) replacedAreJudged(c string, subs []v1alpha1.Subscription, docs []*input.Document) {
	for _, r := range o.replaced(c) {
		csv := &v1alpha1.ClusterServiceVersion{}
		if o.r.Get(context.Background(), types.NamespacedName{Namespace: o.plan.Namespace, Name: r}, csv) != nil {
			continue
		}
		if csv.Labels[v1alpha1.CopiedFromLabel] != "" {
			o.t.Fatalf("invariant: InstallPlan %s is approved, but %s replaces %s, a copy", o.plan.Name, c, r)
		}
		owned := false
		for i := range subs {
			if subs[i].Status.InstalledCSV == r {
				o.allowedSubscription(&subs[i], c)
				owned = true
			}
		}
		if !owned && !slices.ContainsFunc(docs, func(doc *input.Document) bool { return madeOnCSV(doc, r) }) {
			o.t.Fatalf("invariant: InstallPlan %s is approved, but %s replaces %s, which no decision judged", o.plan.Name, c, r)
		}
	}
}

func madeOnCSV(doc *input.Document, r string) bool {
	return doc.Subscription.Status.InstalledCSV == r || (doc.ReplacedCSV != nil && doc.ReplacedCSV.Name == r)
}

// replaced are the CSVs the plan says c replaces.
func (o *oracle) replaced(c string) []string {
	var out []string
	for _, b := range o.plan.Status.BundleLookups {
		if b.Identifier == c && b.Replaces != "" {
			out = append(out, b.Replaces)
		}
	}
	for _, m := range o.csvSteps(c) {
		if m.Spec.Replaces != "" {
			out = append(out, m.Spec.Replaces)
		}
	}
	return out
}

// csvSteps are the CSV manifests of the plan's steps for c.
func (o *oracle) csvSteps(c string) []v1alpha1.ClusterServiceVersion {
	var out []v1alpha1.ClusterServiceVersion
	for _, s := range o.plan.Status.Plan {
		if s != nil && s.Resolving == c && s.Resource.Kind == "ClusterServiceVersion" && s.Resource.Manifest != "" {
			var m v1alpha1.ClusterServiceVersion
			if err := json.Unmarshal([]byte(s.Resource.Manifest), &m); err != nil {
				o.t.Fatalf("invariant: InstallPlan %s is approved with a CSV step for %s that does not parse", o.plan.Name, c)
			}
			out = append(out, m)
		}
	}
	return out
}

// versionsFromTheBundle checks 4 for c.
func (o *oracle) versionsFromTheBundle(c string, docs []*input.Document) {
	given := o.bundleVersions(c)
	if len(given) == 0 {
		return
	}
	for _, doc := range docs {
		if doc.Subscription.Status.CurrentCSV != c {
			continue
		}
		versions, _ := doc.Doc["versions"].(map[string]any)
		entry, _ := versions[c].(map[string]any)
		if got, _ := entry["version"].(string); !slices.Contains(given, got) && !o.existingVersion(c, got) {
			o.t.Fatalf("invariant: InstallPlan %s is approved, and the bundle gives %s the versions %v, but its decision read %q", o.plan.Name, c, given, got)
		}
	}
}

// bundleVersions are the versions the plan's bundle properties and CSV steps give c.
func (o *oracle) bundleVersions(c string) []string {
	var out []string
	for _, b := range o.plan.Status.BundleLookups {
		if b.Identifier == c {
			out = append(out, packageVersions(b.Properties)...)
		}
	}
	for _, m := range o.csvSteps(c) {
		if m.Spec.Version != "" {
			out = append(out, m.Spec.Version)
		}
		out = append(out, packageVersions(m.Annotations[v1alpha1.PropertiesAnnotation])...)
	}
	return out
}

// existingVersion says whether c exists with spec.version v (OLM's own record wins).
func (o *oracle) existingVersion(c, v string) bool {
	csv := &v1alpha1.ClusterServiceVersion{}
	return o.r.Get(context.Background(), types.NamespacedName{Namespace: o.plan.Namespace, Name: c}, csv) == nil && csv.Spec.Version == v && v != ""
}

func packageVersions(props string) []string {
	var doc struct {
		Properties []struct {
			Type  string `json:"type"`
			Value struct {
				Version string `json:"version"`
			} `json:"value"`
		} `json:"properties"`
	}
	if json.Unmarshal([]byte(props), &doc) != nil {
		return nil
	}
	var out []string
	for _, p := range doc.Properties {
		if p.Type == "olm.package" && p.Value.Version != "" {
			out = append(out, p.Value.Version)
		}
	}
	return out
}
