package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// metric is the sum of a metric family's samples whose labels include want.
func metric(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue samples
				}
			}
			switch {
			case m.GetCounter() != nil:
				total += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				total += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}

func TestMetricsCountDecisionsApprovalsAndBlockedSubscriptions(t *testing.T) {
	k := newCluster(t)
	denied := metric(t, "tollgate_decisions_total", map[string]string{"result": "denied", "code": "OperatorNotUpgradeable"})
	approvals := metric(t, "tollgate_installplan_approvals_total", nil)
	evaluations := metric(t, "tollgate_evaluation_duration_seconds", nil)

	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.OfferUpgrade("0.9.4")
	etcd.BlockedBy("OperatorNotUpgradeable")
	// The decision is counted once its status write has returned, so the test may see the
	// status a moment before the count.
	require.Eventually(t, func() bool {
		return metric(t, "tollgate_decisions_total", map[string]string{"result": "denied", "code": "OperatorNotUpgradeable"}) > denied
	}, olmplay.Wait, olmplay.Tick, "the denied decision is counted")
	assert.Equal(t, 1.0, metric(t, "tollgate_blocked_subscriptions", map[string]string{"namespace": k.NS, "name": "etcd"}))
	assert.Greater(t, metric(t, "tollgate_evaluation_duration_seconds", nil), evaluations)

	etcd.Report("Upgradeable", metav1.ConditionTrue, "done")
	k.Approved(plan)
	require.Eventually(t, func() bool {
		return metric(t, "tollgate_installplan_approvals_total", nil) > approvals &&
			metric(t, "tollgate_blocked_subscriptions", map[string]string{"namespace": k.NS, "name": "etcd"}) == 0
	}, olmplay.Wait, olmplay.Tick)
}
