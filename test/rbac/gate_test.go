package rbac

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// The manager, with nothing but config/rbac and one operand rule an admin added, holds an
// upgrade and approves it once the operator agrees. Its CSV also claims to own Secrets: they
// are not operands, and the manager may not read them anyway; had it tried, its cache would
// still be waiting for a Secret informer and the gate would never be evaluated.
func TestTheManagerHoldsAndThenApprovesAnUpgradeWithItsOwnRBAC(t *testing.T) {
	k := newCluster(t)
	k.ServeOperandKind("etcd")
	k.grantOperandRead("etcd")
	k.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: "credentials"}, StringData: map[string]string{"password": "hunter2"}})
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual, v1alpha1.CRDDescription{Name: "secrets.", Version: "v1", Kind: "Secret"})
	etcd.Operand("main", olmplay.Healthy()...)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.OfferUpgrade("0.9.4")

	gate := etcd.Gate("holds the upgrade", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.CurrentCSV == "etcd.v0.9.4" && g.Status.Decision.BlockedBy == tollgatev1alpha1.CodeOperatorNotUpgradeable
	})
	available := meta.FindStatusCondition(gate.Status.Health, "Available")
	require.NotNil(t, available)
	assert.Equal(t, metav1.ConditionTrue, available.Status, "the operand was read through the aggregated role")
	assert.Contains(t, available.Message, "1 of 1 operands", "the Secret is not an operand")
	assert.False(t, k.PlanApproved(plan))

	etcd.Report("Upgradeable", metav1.ConditionTrue, "migration done")
	require.Eventually(t, func() bool { return k.PlanApproved(plan) }, olmplay.Wait, olmplay.Tick, "the plan is approved")
	etcd.Gate("records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan.Name
	})
}

// An operand kind nobody granted Tollgate is not read (the informer would be forbidden): the
// gate's health is Unknown and says which rule to add, and so do the log and the metric the
// TollgateOperandKindUnreadable alert watches. Once the admin adds it, the next evaluation
// reads the operands.
func TestAnOperandKindTollgateMayNotReadShowsTheRuleToAdd(t *testing.T) {
	k := newCluster(t)
	k.ServeOperandKind("redis")
	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	redis.Operand("main", olmplay.Healthy()...)
	rule := `{apiGroups: ["redis.example.com"], resources: ["redisclusters"], verbs: [get, list, watch]}`

	gate := redis.Gate("health unknown", func(g *tollgatev1alpha1.UpgradeGate) bool {
		c := meta.FindStatusCondition(g.Status.Health, "Available")
		return c != nil && c.Status == metav1.ConditionUnknown
	})
	for _, c := range gate.Status.Health {
		assert.Equal(t, metav1.ConditionUnknown, c.Status, c.Type)
		assert.Equal(t, "OperandsUnreadable", c.Reason, c.Type)
		assert.Contains(t, c.Message, rule, c.Type)
		assert.Contains(t, c.Message, `tollgate.dev/aggregate-to-operand-reader: "true"`, c.Type)
	}
	logged := logs.containing("operand kind not readable")
	require.NotEmpty(t, logged)
	assert.True(t, strings.Contains(strings.Join(logged, "\n"), "redisclusters.redis.example.com"), "the log names the kind: %s", logged)
	labels := map[string]string{"namespace": k.NS, "name": "redis"}
	assert.Equal(t, 1.0, gauge(t, "tollgate_unreadable_operand_kinds", labels))

	k.grantOperandRead("redis")
	redis.SetStatus(func(*v1alpha1.SubscriptionStatus) {}) // any change re-evaluates; so does --reevaluate-interval
	redis.Gate("health known", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Health, "Available")
	})
	assert.Equal(t, -1.0, gauge(t, "tollgate_unreadable_operand_kinds", labels), "no series once every kind is readable")
}

// gauge is the value of the manager's gauge name with exactly the labels want; -1 when it has
// no such sample.
func gauge(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, want) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}
