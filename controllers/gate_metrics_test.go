package controllers

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
)

// series returns the value of g's series for key, and whether g has one.
func series(t *testing.T, g *prometheus.GaugeVec, key types.NamespacedName) (float64, bool) {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	g.Collect(ch)
	close(ch)
	for m := range ch {
		var out dto.Metric
		require.NoError(t, m.Write(&out))
		labels := map[string]string{}
		for _, l := range out.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] == key.Namespace && labels["name"] == key.Name {
			return out.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestPerSubscriptionGaugesHaveSeriesOnlyWhereTheyReport(t *testing.T) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "probe", Help: "probe"}, []string{"namespace", "name"})
	key := types.NamespacedName{Namespace: "ns", Name: "etcd"}
	tests := []struct {
		name   string
		values []float64
		want   float64
		has    bool
	}{
		{"never reported on: no series", nil, 0, false},
		{"a value: its series", []float64{2}, 2, true},
		{"zero from the start: no series", []float64{0}, 0, false},
		{"back to zero: the series is gone", []float64{1, 0}, 0, false},
		{"zero, then a value: its series", []float64{0, 3}, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.Reset()
			for _, v := range tt.values {
				setPerSubscription(g, key, v)
			}
			got, has := series(t, g, key)
			assert.Equal(t, tt.has, has)
			assert.Equal(t, tt.want, got)
		})
	}
}

// tollgate_blocked_subscriptions is bounded by what is held: an allowed Subscription has no
// series (at the documented 5,000 Subscriptions, a series at 0 for each would be 5,000 series
// saying nothing), and a gone one loses its series.
func TestOnlyHeldSubscriptionsHaveABlockedSeries(t *testing.T) {
	key := types.NamespacedName{Namespace: "metrics-test", Name: "etcd"}
	t.Cleanup(func() { forgetSubscription(key) })
	r := &GateReconciler{}
	write := func(allowed bool) {
		t.Helper()
		status := tollgatev1alpha1.UpgradeGateStatus{Decision: tollgatev1alpha1.Decision{Allowed: allowed, EvaluatedAt: &metav1.Time{}}}
		gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Status: status}
		// The status is unchanged, so nothing is written: only the metric moves.
		wait, err := r.writeStatus(context.Background(), gate, &approval.Decision{}, pendingStatus{status: status})
		require.NoError(t, err)
		require.Zero(t, wait)
	}

	write(true)
	_, has := series(t, blockedSubscriptions, key)
	assert.False(t, has, "an allowed Subscription has no series")

	write(false)
	v, has := series(t, blockedSubscriptions, key)
	assert.True(t, has, "a held Subscription has a series")
	assert.Equal(t, 1.0, v)

	write(true)
	_, has = series(t, blockedSubscriptions, key)
	assert.False(t, has, "allowed again: the series is deleted")

	write(false)
	setPerSubscription(unreadableOperandKinds, key, 2)
	forgetSubscription(key)
	_, has = series(t, blockedSubscriptions, key)
	assert.False(t, has, "a gone Subscription has no series")
	_, has = series(t, unreadableOperandKinds, key)
	assert.False(t, has, "nor an unreadable-kinds series")
}
