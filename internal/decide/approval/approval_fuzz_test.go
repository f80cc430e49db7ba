package approval_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// The embedded policies, compiled once per process: compiling takes seconds, an input
// milliseconds.
var (
	fuzzEngineOnce sync.Once
	fuzzEngine     *engine.Engine
	fuzzEngineErr  error
)

func embeddedEngine(t testing.TB) *engine.Engine {
	fuzzEngineOnce.Do(func() { fuzzEngine, fuzzEngineErr = engine.New(context.Background(), engine.Options{}) })
	if fuzzEngineErr != nil {
		t.Fatal(fuzzEngineErr)
	}
	return fuzzEngine
}

var operatorConditionGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v2", Kind: "OperatorCondition"}

// FuzzNoApprovalWhileNotUpgradeable loads a fuzzed snapshot as `tollgate eval` does (a
// snapshot that does not load decides nothing), gives every Subscription without an
// UpgradeGate the one the manager creates, and judges every InstallPlan with a Decider on the
// embedded policies. Seeds are the snapshots under test/testdata/snapshots (held.yaml and
// bundled.yaml have an operator that reports Upgradeable=False) and test/testdata/decoys, and
// the cases in testdata/fuzz/FuzzNoApprovalWhileNotUpgradeable, and the states real OLM wrote
// (test/testdata/olm). Every approvable plan must also keep the safety invariant, as the
// oracle (oracle_test.go) states it.
//
// The properties of an approvable plan:
//
//   - its namespace holds at most one OperatorGroup (OLM acts in no other), and it lists no
//     empty CSV name;
//
//   - no claimant is held: every Subscription of the plan's namespace that claims one of its
//     CSVs (status.currentCSV is the CSV, or the same package as one whose is) has a decision,
//     evaluated on its own, that says allowed;
//
//   - computed from the loaded objects without the policies: no claimant's replaced CSV (its
//     status.installedCSV or, without one, the CSV the plan says the new one replaces) has an
//     OperatorCondition (named after it, in its namespace, read untyped as v2) that says
//     Upgradeable=False, unless the upgrade is lifted in one of the two ways an admin may lift
//     it:
//
//   - the OperatorCondition's spec.overrides sets Upgradeable=True (its first entry of type
//     Upgradeable: OLM's own override, which wins over the conditions both ways), or
//
//   - the Subscription's UpgradeGate (same namespace and name) holds an override of code
//     OperatorNotUpgradeable or OperatorConditionStale that has not expired (no expires, or
//     one after the decision's clock).
//
// An OperatorCondition says Upgradeable=False when its first Upgradeable override has any
// status but True; or, without such an override, when any Upgradeable entry of
// status.conditions is False; or when status.conditions has no Upgradeable entry and any
// entry of spec.conditions does (OLM has not copied it yet). An Upgradeable=False in
// spec.conditions beside an Upgradeable entry in status.conditions is not asserted on: OLM
// decides on status.conditions, which it copies from spec.conditions with the generation it
// copied, so a stale copy is the policies' OperatorConditionStale, not checked here.
func FuzzNoApprovalWhileNotUpgradeable(f *testing.F) {
	seeds, _ := filepath.Glob(repo.Path("test", "testdata", "snapshots", "*.yaml"))
	for _, dir := range []string{"decoys", "olm", "agreement"} {
		more, _ := filepath.Glob(repo.Path("test", "testdata", dir, "*.yaml"))
		seeds = append(seeds, more...)
	}
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		eng := embeddedEngine(t)
		file := filepath.Join(t.TempDir(), "snapshot.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.Load(file)
		if err != nil {
			return
		}
		var subs v1alpha1.SubscriptionList
		if err := snap.List(ctx, &subs); err != nil {
			t.Fatal(err)
		}
		for i := range subs.Items {
			err := snap.Get(ctx, client.ObjectKeyFromObject(&subs.Items[i]), &tollgatev1alpha1.UpgradeGate{})
			if client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
			if err != nil {
				if err := snap.Add(gatestatus.New(&subs.Items[i])); err != nil {
					t.Fatal(err)
				}
			}
		}
		d := &approval.Decider{Reader: snap, Policies: eng, Now: func() time.Time { return now }}
		var plans v1alpha1.InstallPlanList
		if err := snap.List(ctx, &plans); err != nil {
			t.Fatal(err)
		}
		for i := range plans.Items {
			plan := &plans.Items[i]
			v, err := d.Judge(ctx, plan)
			if err != nil {
				t.Fatalf("judge %s/%s: %v", plan.Namespace, plan.Name, err)
			}
			if v.Approvable {
				checkApprovable(t, snap, d, plan, subs.Items, now)
			}
			checkInvariant(t, snap, d, plan, v)
		}
	})
}

// checkApprovable fails t when plan, judged approvable, breaks a property of
// FuzzNoApprovalWhileNotUpgradeable.
func checkApprovable(t *testing.T, snap *snapshot.Snapshot, d *approval.Decider, plan *v1alpha1.InstallPlan, subs []v1alpha1.Subscription, now time.Time) {
	t.Helper()
	ctx := context.Background()
	var groups operatorsv1.OperatorGroupList
	if err := snap.List(ctx, &groups, client.InNamespace(plan.Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(groups.Items) > 1 {
		t.Fatalf("InstallPlan %s/%s is approvable beside %d OperatorGroups", plan.Namespace, plan.Name, len(groups.Items))
	}
	for _, csv := range plan.Spec.ClusterServiceVersionNames {
		if csv == "" {
			t.Fatalf("InstallPlan %s/%s is approvable with an empty CSV name", plan.Namespace, plan.Name)
		}
		for _, sub := range claimantsOf(subs, plan.Namespace, csv) {
			if why := notUpgradeable(t, snap, &sub, plan, now); why != "" {
				t.Fatalf("InstallPlan %s/%s is approvable, but it installs %s, which Subscription %s claims, and %s",
					plan.Namespace, plan.Name, csv, sub.Name, why)
			}
			dec, err := d.Decide(ctx, client.ObjectKeyFromObject(&sub))
			if err != nil {
				t.Fatal(err)
			}
			// Its decision sees the other operators of every pending plan; a plan is judged with
			// its own only (the oracle checks that decision), so another plan's peer is no reason.
			if codes := approval.Standing(dec.Result.Decision); !dec.Result.Decision.Allowed && !slices.Equal(codes, []string{"InstallPlanIncludesBlockedOperator"}) {
				t.Fatalf("InstallPlan %s/%s is approvable, but it installs %s, which Subscription %s claims, and its decision holds it: %v",
					plan.Namespace, plan.Name, csv, sub.Name, approval.Standing(dec.Result.Decision))
			}
		}
	}
}

// claimantsOf are the Subscriptions of ns that claim csv: status.currentCSV is csv, or they
// follow the package of one whose is.
func claimantsOf(subs []v1alpha1.Subscription, ns, csv string) []v1alpha1.Subscription {
	packages := map[string]bool{}
	for _, sub := range subs {
		if sub.Namespace == ns && sub.Status.CurrentCSV == csv && sub.Spec != nil && sub.Spec.Package != "" {
			packages[sub.Spec.Package] = true
		}
	}
	var out []v1alpha1.Subscription
	for _, sub := range subs {
		if sub.Namespace == ns && (sub.Status.CurrentCSV == csv || (sub.Spec != nil && packages[sub.Spec.Package])) {
			out = append(out, sub)
		}
	}
	return out
}

// notUpgradeable says why the installed operator of sub may not be upgraded now, or "" when
// it may (see FuzzNoApprovalWhileNotUpgradeable).
func notUpgradeable(t *testing.T, snap *snapshot.Snapshot, sub *v1alpha1.Subscription, plan *v1alpha1.InstallPlan, now time.Time) string {
	t.Helper()
	installed := sub.Status.InstalledCSV
	if installed == "" {
		installed = plan.ReplacesOf(sub.Status.CurrentCSV)
		csv := &v1alpha1.ClusterServiceVersion{}
		if installed == "" || snap.Get(context.Background(), types.NamespacedName{Namespace: sub.Namespace, Name: installed}, csv) != nil {
			return ""
		}
	}
	oc := &unstructured.Unstructured{}
	oc.SetGroupVersionKind(operatorConditionGVK)
	if err := snap.Get(context.Background(), types.NamespacedName{Namespace: sub.Namespace, Name: installed}, oc); err != nil {
		return ""
	}
	var why string
	overrides := entries(oc, "spec", "overrides")
	statuses := entries(oc, "status", "conditions")
	switch {
	case len(overrides) > 0:
		if overrides[0] == "True" {
			return "" // OLM's override: lifted
		}
		why = "spec.overrides sets Upgradeable=" + overrides[0]
	case len(statuses) > 0:
		for _, s := range statuses {
			if s == "False" {
				why = "status.conditions says Upgradeable=False"
			}
		}
	default:
		for _, s := range entries(oc, "spec", "conditions") {
			if s == "False" {
				why = "spec.conditions says Upgradeable=False (not yet in status.conditions)"
			}
		}
	}
	if why == "" || waived(t, snap, sub, now) {
		return ""
	}
	return "its OperatorCondition " + installed + " " + why
}

// entries are the statuses of the entries of type Upgradeable of the list at field of u.
func entries(u *unstructured.Unstructured, field ...string) []string {
	list, _, _ := unstructured.NestedSlice(u.Object, field...)
	var out []string
	for _, it := range list {
		if m, ok := it.(map[string]any); ok && m["type"] == "Upgradeable" {
			s, _ := m["status"].(string)
			out = append(out, s)
		}
	}
	return out
}

// waived says whether sub's UpgradeGate waives OperatorNotUpgradeable or
// OperatorConditionStale at now.
func waived(t *testing.T, snap *snapshot.Snapshot, sub *v1alpha1.Subscription, now time.Time) bool {
	t.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	if err := snap.Get(context.Background(), client.ObjectKeyFromObject(sub), gate); err != nil {
		return false
	}
	for _, o := range gate.Spec.Overrides {
		if (o.Code == tollgatev1alpha1.CodeOperatorNotUpgradeable || o.Code == tollgatev1alpha1.CodeOperatorConditionStale) &&
			(o.Expires == nil || o.Expires.After(now)) {
			return true
		}
	}
	return false
}
