package olm

import (
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
)

// The CSV OLM installed owns a CRD; an instance reports Degraded=True: the upgrade is held on
// the operand's health, and approved once it heals.
func TestUpgradeHeldWhileAnOperandIsDegraded(t *testing.T) {
	v1 := release{pkg: "alpha", version: "1.0.0"}
	v2 := release{pkg: "alpha", version: "2.0.0", replaces: csvName("alpha", "1.0.0")}
	w := newWorld(t, v1)
	w.grantOperandRead("alpha")
	ns := w.namespace("operand-")
	w.install(ns, "alpha", "alpha", csvName("alpha", "1.0.0"))
	main := w.operand(ns, "alpha", "main", metav1.ConditionTrue, "lost quorum")

	w.opm.publish([]release{v1, v2})
	plan := w.pendingPlan(ns, "alpha", csvName("alpha", "2.0.0"))
	w.gate(ns, "alpha", "held: an operand is degraded", denies("OperatorDegraded"))
	w.stillUnapproved(ns, plan.Name)
	w.fixture("operand-degraded-held", "an AlphaCluster reports Degraded=True while OLM's plan to alpha 2.0.0 waits",
		schema.GroupVersionKind{Group: operandGroup("alpha"), Version: "v1", Kind: operandKind("alpha") + "List"})

	w.setDegraded(main, metav1.ConditionFalse, "quorum restored")
	w.gate(ns, "alpha", "approved once the operand healed", approved(plan.Name))
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.installed(ns, "alpha", csvName("alpha", "2.0.0"))
}

// grantOperandRead plays the cluster admin extending Tollgate's operand reader with pkg's
// operand kind, and kube-controller-manager aggregating it into tollgate-operand-reader.
func (w *world) grantOperandRead(pkg string) {
	w.t.Helper()
	w.create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-read-" + operandPlural(pkg), Labels: map[string]string{controllers.OperandReaderLabel: "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{operandGroup(pkg)}, Resources: []string{operandPlural(pkg)}, Verbs: []string{"get", "list", "watch"}}},
	})
	agg := &rbacv1.ClusterRole{}
	require.True(w.t, w.get("", "tollgate-operand-reader", agg), "config/rbac's tollgate-operand-reader")
	require.NotNil(w.t, agg.AggregationRule, "tollgate-operand-reader is an aggregated ClusterRole")
	var roles rbacv1.ClusterRoleList
	require.NoError(w.t, w.c.List(w.ctx, &roles))
	agg.Rules = nil
	for _, s := range agg.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&s)
		require.NoError(w.t, err)
		for _, r := range roles.Items {
			if r.Name != agg.Name && selector.Matches(labels.Set(r.Labels)) {
				agg.Rules = append(agg.Rules, r.Rules...)
			}
		}
	}
	require.NoError(w.t, w.c.Update(w.ctx, agg))
}

// operand creates an instance of pkg's operand kind (its CRD installed by OLM) reporting
// Degraded with status and message, as its operator would.
func (w *world) operand(ns, pkg, name string, degraded metav1.ConditionStatus, message string) *unstructured.Unstructured {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(operandGroup(pkg) + "/v1")
	u.SetKind(operandKind(pkg))
	u.SetNamespace(ns)
	u.SetName(name)
	require.NoError(w.t, unstructured.SetNestedField(u.Object, int64(3), "spec", "size"))
	w.create(u)
	w.setDegraded(u, degraded, message)
	return u
}

// setDegraded writes the operand's status: Available, and Degraded as given.
func (w *world) setDegraded(u *unstructured.Unstructured, degraded metav1.ConditionStatus, message string) {
	w.t.Helper()
	now := metav1.Now().UTC().Format("2006-01-02T15:04:05Z")
	conds := []any{
		map[string]any{"type": "Available", "status": "True", "reason": "Running", "message": "3 members", "lastTransitionTime": now},
		map[string]any{"type": "Degraded", "status": string(degraded), "reason": "Quorum", "message": message, "lastTransitionTime": now},
	}
	require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKeyFromObject(u), u))
	require.NoError(w.t, unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"))
	require.NoError(w.t, w.c.Status().Update(w.ctx, u))
}
