package gatestatus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

func digest(d string) func() string { return func() string { return d } }

func TestNextStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	sub := &v1alpha1.Subscription{
		Spec:   &v1alpha1.SubscriptionSpec{Package: "etcd"},
		Status: v1alpha1.SubscriptionStatus{InstalledCSV: "etcd.v1", CurrentCSV: "etcd.v2"},
	}
	blocked := &engine.Result{
		State:      "UpgradePending",
		Conditions: []engine.Condition{{Type: "InstallPlanMissing", Status: "False", Reason: "InstallPlanPresent", Message: "m"}},
		Health:     []engine.Condition{{Type: "Degraded", Status: "False", Reason: "", Message: "fine"}},
		Decision: engine.Decision{Denials: []tollgatev1alpha1.Denial{
			{Code: "OperatorNotUpgradeable", Message: "migrating"},
		}},
		Revision: "rev1",
	}
	first := nextStatus(tollgatev1alpha1.UpgradeGateStatus{}, observation{generation: 1, sub: sub, result: blocked, digest: digest("d1"), now: t0})

	t.Run("the first evaluation fills the view, the decision and its time", func(t *testing.T) {
		assert.Equal(t, "etcd", first.Package)
		assert.Equal(t, "etcd.v2", first.CurrentCSV)
		assert.False(t, first.Decision.Allowed)
		assert.Equal(t, "OperatorNotUpgradeable", first.Decision.BlockedBy)
		assert.Equal(t, "rev1", first.Decision.PolicyRevision)
		require.NotNil(t, first.Decision.EvaluatedAt)
		assert.Equal(t, t0, *first.Decision.EvaluatedAt)
		assert.Equal(t, "Unspecified", first.Health[0].Reason, "an empty reason is replaced by one the API server accepts")
	})

	t.Run("an unchanged evaluation later produces an equal status", func(t *testing.T) {
		again := nextStatus(first, observation{generation: 1, sub: sub, result: blocked, digest: digest("d1"), now: t1})
		assert.True(t, equality.Semantic.DeepEqual(first, again), "a no-op reconcile must not write")
	})

	t.Run("a changed input with the same outcome keeps the digest and time of the first", func(t *testing.T) {
		again := nextStatus(first, observation{generation: 1, sub: sub, result: blocked, digest: digest("d9"), now: t1})
		assert.True(t, equality.Semantic.DeepEqual(first, again))
	})

	t.Run("a status change moves lastTransitionTime and evaluatedAt; an unchanged condition keeps its time", func(t *testing.T) {
		allowed := *blocked
		allowed.Decision = engine.Decision{Allowed: true}
		allowed.Conditions = []engine.Condition{{Type: "InstallPlanMissing", Status: "False", Reason: "InstallPlanPresent", Message: "m"}}
		allowed.Health = []engine.Condition{{Type: "Degraded", Status: "True", Reason: "HealFailed", Message: "broken"}}
		next := nextStatus(first, observation{generation: 1, sub: sub, result: &allowed, digest: digest("d2"), now: t1})
		assert.True(t, next.Decision.Allowed)
		assert.Empty(t, next.Decision.BlockedBy)
		assert.Equal(t, t1, *next.Decision.EvaluatedAt)
		assert.Equal(t, "d2", next.Decision.InputDigest)
		assert.Equal(t, t0, next.Conditions[0].LastTransitionTime)
		assert.Equal(t, t1, next.Health[0].LastTransitionTime)
	})

	t.Run("an approval is remembered", func(t *testing.T) {
		next := nextStatus(first, observation{generation: 1, sub: sub, result: blocked, digest: digest("d1"), now: t1, approved: "install-1"})
		assert.Equal(t, "install-1", next.Decision.LastApprovedInstallPlan)
		later := nextStatus(next, observation{generation: 1, sub: sub, result: blocked, digest: digest("d1"), now: t1})
		assert.Equal(t, "install-1", later.Decision.LastApprovedInstallPlan)
	})
}
