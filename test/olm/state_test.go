package olm

import (
	"encoding/json"
	"fmt"
	"slices"

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
