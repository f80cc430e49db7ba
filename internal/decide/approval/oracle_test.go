package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// checkInvariant fails t when v approves plan and the safety invariant does not hold: every
// move the plan makes has an allowing decision whose document states both real ends. It states
// the invariant a second time, deliberately simply, from OLM's semantics and apart from package
// approval's rules: it reads the plan's manifests and properties itself, follows the
// replacement chains itself, and looks at the evaluations d made while judging the plan again.
// For an approved plan:
//
//  1. a Subscription of its namespace lists one of its CSVs as status.currentCSV (OLM made
//     the plan for it, and the manager acts through it);
//  2. every CSV c it lists is decided: each Subscription whose currentCSV is c is Manual and has
//     a gate in Enforce mode; or, with none, exactly one Subscription step of the plan starts at
//     c, no Subscription of the namespace follows its package, and that Subscription as OLM
//     would create it is in Enforce mode; every CSV step creates the CSV it is listed for;
//  3. every move to c — from each CSV the plan says c replaces and each claimant's installed
//     CSV, and each CSV up the chain behind them (spec.replaces, while they exist), or from
//     nothing — was evaluated on a document stating this plan, c and that from end, and every
//     such evaluation allowed; each Subscription that owns a CSV replaced is Manual, Enforce and
//     judged the move on its own document; no CSV replaced is a copy;
//  4. where the plan's bundle gives c a version, each such document's move.to.version is one of
//     them, as OLM parses it.
func checkInvariant(t *testing.T, r client.Reader, d *approval.Decider, plan *v1alpha1.InstallPlan, v approval.Verdict) {
	t.Helper()
	if !v.Approvable {
		return
	}
	rec := &recording{inner: d.Policies}
	again := *d
	again.Policies = rec
	if v, err := again.Judge(context.Background(), plan); err != nil || !v.Approvable {
		t.Fatalf("invariant: InstallPlan %s judged again is not approvable (%v): %s", plan.Name, err, v.WhyNot())
	}
	o := &oracle{t: t, r: r, d: d, plan: plan, evals: rec.evals}
	o.stepsCreateTheirCSVs()
	subs := o.subscriptions()
	if !slices.ContainsFunc(subs, func(s v1alpha1.Subscription) bool {
		return slices.Contains(plan.Spec.ClusterServiceVersionNames, s.Status.CurrentCSV)
	}) {
		t.Fatalf("invariant: InstallPlan %s is approved, but no Subscription waits on it", plan.Name)
	}
	for _, c := range plan.Spec.ClusterServiceVersionNames {
		o.decisionsOn(c, subs)
		o.movesAreJudged(c, subs)
	}
}

type oracle struct {
	t     *testing.T
	r     client.Reader
	d     *approval.Decider
	plan  *v1alpha1.InstallPlan
	evals []evaluation
}

// evaluation is one document d evaluated while judging the plan, and whether it allowed.
type evaluation struct {
	doc     map[string]any
	allowed bool
}

// recording is an Evaluator that remembers every evaluation.
type recording struct {
	inner approval.Evaluator
	evals []evaluation
}

func (r *recording) Evaluate(ctx context.Context, doc map[string]any) *engine.Result {
	res := r.inner.Evaluate(ctx, doc)
	r.evals = append(r.evals, evaluation{doc: doc, allowed: res.Decision.Allowed})
	return res
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

// allowed fails unless doc's mode is Enforce, it is Manual and it has the gate it needs (its
// decisions are the moves', checked by movesAreJudged).
func (o *oracle) allowed(doc *input.Document, c string, automatic, gateless bool) {
	mode := approval.EffectiveMode(doc.Gate, o.d.Input.WithDefaults().DefaultMode)
	if mode != tollgatev1alpha1.ModeEnforce || automatic || gateless {
		o.t.Fatalf("invariant: InstallPlan %s is approved, but %s, which decides %s, has mode %s, automatic %v, gate %v",
			o.plan.Name, doc.Subscription.Name, c, mode, automatic, !gateless)
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

// movesAreJudged checks 3 and 4 for c.
func (o *oracle) movesAreJudged(c string, subs []v1alpha1.Subscription) {
	starts := o.replaced(c)
	for _, sub := range claimantsOf(subs, o.plan.Namespace, c) {
		starts = append(starts, sub.Status.InstalledCSV)
	}
	froms := o.chains(starts)
	if len(froms) == 0 {
		froms = []string{""}
	}
	for _, from := range froms {
		judged := o.judgedBy(c, from)
		if len(judged) == 0 {
			o.t.Fatalf("invariant: InstallPlan %s is approved, but no decision judged its move from %q to %s", o.plan.Name, from, c)
		}
		for i := range subs {
			if from != "" && (subs[i].Status.InstalledCSV == from || subs[i].Status.CurrentCSV == from) {
				o.allowedSubscription(&subs[i], c)
				if !slices.Contains(judged, subs[i].Name) {
					o.t.Fatalf("invariant: InstallPlan %s is approved, but Subscription %s, which owns %s, did not judge the move to %s", o.plan.Name, subs[i].Name, from, c)
				}
			}
		}
	}
}

// chains are the existing CSVs each of starts leads to by spec.replaces, none of them a copy.
func (o *oracle) chains(starts []string) []string {
	var out []string
	for _, r := range starts {
		for r != "" && !slices.Contains(out, r) {
			csv := &v1alpha1.ClusterServiceVersion{}
			if o.r.Get(context.Background(), types.NamespacedName{Namespace: o.plan.Namespace, Name: r}, csv) != nil {
				break
			}
			if csv.Labels[v1alpha1.CopiedFromLabel] != "" {
				o.t.Fatalf("invariant: InstallPlan %s is approved, but it replaces %s, a copy", o.plan.Name, r)
			}
			out = append(out, r)
			r = csv.Spec.Replaces
		}
	}
	return out
}

// judgedBy are the Subscriptions whose documents judged the move from (""; nothing) to c of
// this plan; each such evaluation must allow, with one of the bundle's versions for c.
func (o *oracle) judgedBy(c, from string) []string {
	given := map[string]bool{}
	for _, v := range o.bundleVersions(c) {
		if p, ok := policies.BundleVersion(v); ok {
			given[p] = true
		}
	}
	var out []string
	for _, e := range o.evals {
		move, _ := e.doc["move"].(map[string]any)
		to, _ := move["to"].(map[string]any)
		f, _ := move["from"].(map[string]any)
		if move["installPlan"] != o.plan.Name || to["name"] != c || (f == nil) != (from == "") || (f != nil && f["name"] != from) {
			continue
		}
		if !e.allowed {
			o.t.Fatalf("invariant: InstallPlan %s is approved, but the decision on its move from %q to %s did not allow", o.plan.Name, from, c)
		}
		if v, _ := to["version"].(string); len(given) > 0 && !given[v] {
			o.t.Fatalf("invariant: InstallPlan %s is approved, and the bundle gives %s the versions %v, but its move read %q", o.plan.Name, c, o.bundleVersions(c), v)
		}
		sub, _ := e.doc["subscription"].(map[string]any)
		meta, _ := sub["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		out = append(out, name)
	}
	return out
}

// stepsCreateTheirCSVs checks the end of 2: a CSV step's resource and manifest name the CSV it
// resolves, which the plan lists.
func (o *oracle) stepsCreateTheirCSVs() {
	for _, s := range o.plan.Status.Plan {
		if s == nil || s.Resource.Kind != "ClusterServiceVersion" {
			continue
		}
		var m v1alpha1.ClusterServiceVersion
		_ = json.Unmarshal([]byte(s.Resource.Manifest), &m)
		if !slices.Contains(o.plan.Spec.ClusterServiceVersionNames, s.Resolving) || s.Resource.Name != s.Resolving || (m.Name != "" && m.Name != s.Resolving) {
			o.t.Fatalf("invariant: InstallPlan %s is approved, but a CSV step for %s creates %s (manifest %q)", o.plan.Name, s.Resolving, s.Resource.Name, m.Name)
		}
	}
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

// TestTheInvariantHoldsOnEveryCorpus judges every plan of every state real OLM wrote
// (test/testdata/olm), every decoy and agreement state, with the embedded policies and with
// every pack at its defaults, and checks the invariant on each verdict.
func TestTheInvariantHoldsOnEveryCorpus(t *testing.T) {
	var files []string
	for _, dir := range []string{"olm", "decoys", "agreement", "snapshots"} {
		found, err := filepath.Glob(repo.Path("test", "testdata", dir, "*.yaml"))
		require.NoError(t, err)
		files = append(files, found...)
	}
	require.NotEmpty(t, files)
	packs := []string{"version", "freeze", "window", "soak", "firstinstall"}
	approved := 0
	for _, file := range files {
		for _, ps := range [][]string{nil, packs} {
			t.Run(fmt.Sprintf("%s/packs=%d", filepath.Base(file), len(ps)), func(t *testing.T) {
				snap := gated(t, file)
				d := &approval.Decider{Reader: snap, Policies: casePolicies(t, ps, nil), Now: func() time.Time { return caseNow }}
				var plans v1alpha1.InstallPlanList
				require.NoError(t, snap.List(context.Background(), &plans))
				for i := range plans.Items {
					v, err := d.Judge(context.Background(), &plans.Items[i])
					require.NoError(t, err)
					checkInvariant(t, snap, d, &plans.Items[i], v)
					if v.Approvable {
						approved++
					}
				}
			})
		}
	}
	t.Logf("%d files, %d approved plans checked", len(files), approved)
	require.Positive(t, approved, "the corpus approves no plan: the invariant checks nothing")
}
