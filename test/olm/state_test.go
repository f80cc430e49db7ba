package olm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// namespace creates a namespace named prefix plus a random suffix, with an OperatorGroup
// that targets it (OLM fills in its status).
func (w *world) namespace(prefix string) string {
	w.t.Helper()
	ns := prefix + rand.String(5)
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	w.create(&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}}})
	return ns
}

// subscribe creates the Subscription ns/name to pkg's channel in the suite's catalog.
func (w *world) subscribe(ns, name, pkg string, approval v1alpha1.Approval) {
	w.t.Helper()
	w.create(&v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: catalogName, CatalogSourceNamespace: globalNS,
			Package: pkg, Channel: channel, InstallPlanApproval: approval}})
}

// get reads ns/name into obj; false when it does not exist (yet).
func (w *world) get(ns, name string, obj client.Object) bool {
	w.t.Helper()
	err := w.c.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(w.t, err)
	return true
}

func (w *world) subscription(ns, name string) *v1alpha1.Subscription {
	sub := &v1alpha1.Subscription{}
	w.get(ns, name, sub)
	return sub
}

// pendingPlan waits until OLM has written, for the Subscription ns/name, an InstallPlan that
// installs csv, and returns it.
func (w *world) pendingPlan(ns, name, csv string) *v1alpha1.InstallPlan {
	w.t.Helper()
	plan := &v1alpha1.InstallPlan{}
	w.eventually(fmt.Sprintf("a plan for %s referenced by Subscription %s/%s", csv, ns, name), func() bool {
		ref := w.subscription(ns, name).Status.InstallPlanRef
		return ref != nil && w.get(ns, ref.Name, plan) && slices.Contains(plan.Spec.ClusterServiceVersionNames, csv) && plan.Status.Phase != ""
	}, func() string { return "subscription status " + describe(w.subscription(ns, name).Status) })
	return plan
}

// planPhase waits until the plan ns/name is in phase.
func (w *world) planPhase(ns, name string, phase v1alpha1.InstallPlanPhase) *v1alpha1.InstallPlan {
	w.t.Helper()
	plan := &v1alpha1.InstallPlan{}
	w.eventually(fmt.Sprintf("plan %s/%s %s", ns, name, phase), func() bool {
		return w.get(ns, name, plan) && plan.Status.Phase == phase
	}, func() string {
		return fmt.Sprintf("phase %q, approved %v, message %q", plan.Status.Phase, plan.Spec.Approved, plan.Status.Message)
	})
	return plan
}

// csvPhase waits until the CSV ns/name is in phase.
func (w *world) csvPhase(ns, name string, phase v1alpha1.ClusterServiceVersionPhase) *v1alpha1.ClusterServiceVersion {
	w.t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{}
	w.eventually(fmt.Sprintf("CSV %s/%s %s", ns, name, phase), func() bool {
		return w.get(ns, name, csv) && csv.Status.Phase == phase
	}, func() string {
		return fmt.Sprintf("phase %q, reason %q, message %q", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
	})
	return csv
}

// installed waits until the Subscription ns/name reports csv installed and at the latest.
func (w *world) installed(ns, name, csv string) *v1alpha1.Subscription {
	w.t.Helper()
	var sub *v1alpha1.Subscription
	w.eventually(fmt.Sprintf("Subscription %s/%s at %s", ns, name, csv), func() bool {
		sub = w.subscription(ns, name)
		return sub.Status.InstalledCSV == csv && sub.Status.State == v1alpha1.SubscriptionStateAtLatest
	}, func() string { return "status " + describe(sub.Status) })
	return sub
}

// gate waits until the UpgradeGate ns/name has decided and ok holds, and returns it.
func (w *world) gate(ns, name, what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) *tollgatev1alpha1.UpgradeGate {
	w.t.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	w.eventually(fmt.Sprintf("gate %s/%s %s", ns, name, what), func() bool {
		return w.get(ns, name, gate) && gate.Status.Decision.EvaluatedAt != nil && ok(gate)
	}, func() string { return "decision " + describe(gate.Status.Decision) })
	return gate
}

// report writes the operator's condition into its OperatorCondition's spec, as an operator
// does through OLM's library; OLM copies it to status.
func (w *world) report(ns, csv, typ string, status metav1.ConditionStatus, reason, message string) {
	w.t.Helper()
	oc := &operatorsv2.OperatorCondition{}
	w.eventually("OperatorCondition "+csv+" created by OLM", func() bool { return w.get(ns, csv, oc) }, func() string { return "" })
	cond := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: oc.Generation, LastTransitionTime: metav1.Now()}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"conditions": []metav1.Condition{cond}}})
	require.NoError(w.t, err)
	require.NoError(w.t, w.c.Patch(w.ctx, oc, client.RawPatch(types.MergePatchType, patch)))
}

// copiedToStatus waits until OLM has copied the operator's condition typ to status.
func (w *world) copiedToStatus(ns, csv, typ string, status metav1.ConditionStatus) {
	w.t.Helper()
	oc := &operatorsv2.OperatorCondition{}
	w.eventually(fmt.Sprintf("OperatorCondition %s status %s=%s", csv, typ, status), func() bool {
		if !w.get(ns, csv, oc) {
			return false
		}
		i := slices.IndexFunc(oc.Status.Conditions, func(c metav1.Condition) bool { return c.Type == typ })
		return i >= 0 && oc.Status.Conditions[i].Status == status
	}, func() string { return "status " + describe(oc.Status) })
}

// stillUnapproved checks that the plan ns/name stays unapproved, in RequiresApproval, for
// holdFor: Tollgate has decided and holds it (its decision comes well within that).
func (w *world) stillUnapproved(ns, name string) {
	w.t.Helper()
	plan := &v1alpha1.InstallPlan{}
	require.Never(w.t, func() bool {
		return !w.get(ns, name, plan) || plan.Spec.Approved || plan.Status.Phase != v1alpha1.InstallPlanPhaseRequiresApproval
	}, holdFor, tick, "plan %s/%s must stay unapproved and waiting", ns, name)
}

// gone waits until OLM has deleted obj ns/name.
func (w *world) gone(ns, name string, obj client.Object) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("%T %s/%s deleted", obj, ns, name), func() bool { return !w.get(ns, name, obj) }, func() string { return "" })
}

// denies says whether the gate holds with a standing denial of code.
func denies(code string) func(*tollgatev1alpha1.UpgradeGate) bool {
	return func(g *tollgatev1alpha1.UpgradeGate) bool {
		if g.Status.Decision.Allowed {
			return false
		}
		return slices.ContainsFunc(g.Status.Decision.Denials, func(d tollgatev1alpha1.Denial) bool { return d.Code == code && !d.Overridden })
	}
}

// approved says whether the gate allows and last approved plan.
func approved(plan string) func(*tollgatev1alpha1.UpgradeGate) bool {
	return func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan
	}
}

// override sets the OperatorCondition's spec.overrides, as a cluster admin does to let an
// upgrade through whatever the operator says.
func (w *world) override(ns, csv, typ string, status metav1.ConditionStatus, reason, message string) {
	w.t.Helper()
	oc := &operatorsv2.OperatorCondition{}
	require.True(w.t, w.get(ns, csv, oc), "OperatorCondition %s/%s", ns, csv)
	cond := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"overrides": []metav1.Condition{cond}}})
	require.NoError(w.t, err)
	require.NoError(w.t, w.c.Patch(w.ctx, oc, client.RawPatch(types.MergePatchType, patch)))
}

// planOf waits until OLM's InstallPlan for the Subscription ns/name installs every csv, and
// returns it.
func (w *world) planOf(ns, name string, csvs ...string) *v1alpha1.InstallPlan {
	w.t.Helper()
	plan := w.pendingPlan(ns, name, csvs[0])
	for _, csv := range csvs[1:] {
		require.Contains(w.t, plan.Spec.ClusterServiceVersionNames, csv, "OLM's plan %s/%s", ns, plan.Name)
	}
	return plan
}

// subscriptionFor is the name of the Subscription OLM created in ns for pkg (a dependency's).
func (w *world) subscriptionFor(ns, pkg string) string {
	w.t.Helper()
	var name string
	w.eventually("a Subscription to "+pkg+" in "+ns, func() bool {
		var subs v1alpha1.SubscriptionList
		require.NoError(w.t, w.c.List(w.ctx, &subs, client.InNamespace(ns)))
		for _, s := range subs.Items {
			if s.Spec != nil && s.Spec.Package == pkg {
				name = s.Name
				return true
			}
		}
		return false
	}, func() string { return "" })
	return name
}

// catalogState waits until OLM reports the suite's CatalogSource's connection in one of states.
func (w *world) catalogState(states ...string) {
	w.t.Helper()
	cs := &v1alpha1.CatalogSource{}
	w.eventually(fmt.Sprintf("CatalogSource %s/%s in %v", globalNS, catalogName, states), func() bool {
		return w.get(globalNS, catalogName, cs) && cs.Status.GRPCConnectionState != nil &&
			slices.Contains(states, cs.Status.GRPCConnectionState.LastObservedState)
	}, func() string { return "status " + describe(cs.Status) })
}

// deleteCatalogSource deletes the suite's CatalogSource.
func (w *world) deleteCatalogSource() {
	w.t.Helper()
	cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: globalNS, Name: catalogName}}
	require.NoError(w.t, w.c.Delete(w.ctx, cs))
	w.gone(globalNS, catalogName, &v1alpha1.CatalogSource{})
}

// subscriptionCondition waits until OLM reports the condition typ with status on the
// Subscription ns/name.
func (w *world) subscriptionCondition(ns, name, typ string, status corev1.ConditionStatus) {
	w.t.Helper()
	var sub *v1alpha1.Subscription
	w.eventually(fmt.Sprintf("Subscription %s/%s %s=%s", ns, name, typ, status), func() bool {
		sub = w.subscription(ns, name)
		i := slices.IndexFunc(sub.Status.Conditions, func(c v1alpha1.SubscriptionCondition) bool { return c.Type == typ })
		return i >= 0 && sub.Status.Conditions[i].Status == status
	}, func() string { return "conditions " + describe(sub.Status.Conditions) })
}

// watchApprovals watches the InstallPlans of ns from now until the test ends, and returns a
// function giving, per plan, every approval record Tollgate wrote on it, in order.
func (w *world) watchApprovals(ns string) func() map[string][]string {
	w.t.Helper()
	wc, err := client.NewWithWatch(w.env.Config, client.Options{Scheme: w.c.Scheme()})
	require.NoError(w.t, err)
	watcher, err := wc.Watch(w.ctx, &v1alpha1.InstallPlanList{}, client.InNamespace(ns))
	require.NoError(w.t, err)
	w.t.Cleanup(watcher.Stop)
	var mu sync.Mutex
	records := map[string][]string{}
	go func() {
		for ev := range watcher.ResultChan() {
			plan, ok := ev.Object.(*v1alpha1.InstallPlan)
			if !ok {
				continue
			}
			rec := plan.Annotations[tollgatev1alpha1.ApprovalRecordAnnotation]
			mu.Lock()
			if seen := records[plan.Name]; rec != "" && (len(seen) == 0 || seen[len(seen)-1] != rec) {
				records[plan.Name] = append(seen, rec)
			}
			mu.Unlock()
		}
	}()
	return func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(records)
	}
}

// everyPlanUnapproved checks, for holdFor, that no InstallPlan of ns is approved but those
// that installed what was there before the plan first (the first install's).
func (w *world) everyPlanUnapproved(ns string, held ...string) {
	w.t.Helper()
	var plans v1alpha1.InstallPlanList
	require.NoError(w.t, w.c.List(w.ctx, &plans, client.InNamespace(ns)))
	before := map[string]bool{}
	for _, p := range plans.Items {
		before[p.Name] = p.Spec.Approved && !slices.Contains(held, p.Name)
	}
	require.Never(w.t, func() bool {
		require.NoError(w.t, w.c.List(w.ctx, &plans, client.InNamespace(ns)))
		return slices.ContainsFunc(plans.Items, func(p v1alpha1.InstallPlan) bool { return p.Spec.Approved && !before[p.Name] })
	}, holdFor, tick, "a plan of %s was approved", ns)
}

// deleteSubscription deletes the Subscription ns/name and waits until it is gone.
func (w *world) deleteSubscription(ns, name string) {
	w.t.Helper()
	require.NoError(w.t, w.c.Delete(w.ctx, &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	w.gone(ns, name, &v1alpha1.Subscription{})
}
