package gatestatus_test

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
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
)

func digest(d string) func() string { return func() string { return d } }

// statusOf is gatestatus.Next for results whose reasons are all valid.
func statusOf(old tollgatev1alpha1.UpgradeGateStatus, o gatestatus.Observation) tollgatev1alpha1.UpgradeGateStatus {
	status, _ := gatestatus.Next(old, o)
	return status
}

func TestNext(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	sub := &v1alpha1.Subscription{
		Spec:   &v1alpha1.SubscriptionSpec{Package: "etcd"},
		Status: v1alpha1.SubscriptionStatus{InstalledCSV: "etcd.v1", CurrentCSV: "etcd.v2"},
	}
	blocked := &engine.Result{
		State:      "UpgradePending",
		Conditions: []engine.Condition{{Type: "InstallPlanMissing", Status: "False", Reason: "InstallPlanPresent", Message: "m"}},
		Health:     []engine.Condition{{Type: "Degraded", Status: "False", Reason: "AsExpected", Message: "fine"}},
		Decision: engine.Decision{Denials: []engine.Denial{
			{Denial: tollgatev1alpha1.Denial{Code: "OperatorNotUpgradeable", Message: "migrating"}},
		}},
		Revision: "rev1",
	}
	first := statusOf(tollgatev1alpha1.UpgradeGateStatus{}, gatestatus.Observation{Generation: 1, Subscription: sub, Result: blocked, Digest: digest("d1"), Now: t0})

	t.Run("the first evaluation fills the view, the decision and its time", func(t *testing.T) {
		assert.Equal(t, "etcd", first.Package)
		assert.Equal(t, "etcd.v2", first.CurrentCSV)
		assert.False(t, first.Decision.Allowed)
		assert.Equal(t, "OperatorNotUpgradeable", first.Decision.BlockedBy)
		assert.Equal(t, "rev1", first.Decision.PolicyRevision)
		require.NotNil(t, first.Decision.EvaluatedAt)
		assert.Equal(t, t0, *first.Decision.EvaluatedAt)
	})

	t.Run("an unchanged evaluation later produces an equal status", func(t *testing.T) {
		again := statusOf(first, gatestatus.Observation{Generation: 1, Subscription: sub, Result: blocked, Digest: digest("d1"), Now: t1})
		assert.True(t, equality.Semantic.DeepEqual(first, again), "a no-op reconcile must not write")
	})

	t.Run("a changed input with the same outcome keeps the digest and time of the first", func(t *testing.T) {
		again := statusOf(first, gatestatus.Observation{Generation: 1, Subscription: sub, Result: blocked, Digest: digest("d9"), Now: t1})
		assert.True(t, equality.Semantic.DeepEqual(first, again))
	})

	t.Run("a status change moves lastTransitionTime and evaluatedAt; an unchanged condition keeps its time", func(t *testing.T) {
		allowed := *blocked
		allowed.Decision = engine.Decision{Allowed: true}
		allowed.Conditions = []engine.Condition{{Type: "InstallPlanMissing", Status: "False", Reason: "InstallPlanPresent", Message: "m"}}
		allowed.Health = []engine.Condition{{Type: "Degraded", Status: "True", Reason: "HealFailed", Message: "broken"}}
		updated := statusOf(first, gatestatus.Observation{Generation: 1, Subscription: sub, Result: &allowed, Digest: digest("d2"), Now: t1})
		assert.True(t, updated.Decision.Allowed)
		assert.Empty(t, updated.Decision.BlockedBy)
		assert.Equal(t, t1, *updated.Decision.EvaluatedAt)
		assert.Equal(t, "d2", updated.Decision.InputDigest)
		assert.Equal(t, t0, updated.Conditions[0].LastTransitionTime)
		assert.Equal(t, t1, updated.Health[0].LastTransitionTime)
	})

	t.Run("an approval is remembered", func(t *testing.T) {
		updated := statusOf(first, gatestatus.Observation{Generation: 1, Subscription: sub, Result: blocked, Digest: digest("d1"), Now: t1, Approved: "install-1"})
		assert.Equal(t, "install-1", updated.Decision.LastApprovedInstallPlan)
		later := statusOf(updated, gatestatus.Observation{Generation: 1, Subscription: sub, Result: blocked, Digest: digest("d1"), Now: t1})
		assert.Equal(t, "install-1", later.Decision.LastApprovedInstallPlan)
	})

	t.Run("an approval is no new decision", func(t *testing.T) {
		updated := statusOf(first, gatestatus.Observation{Generation: 1, Subscription: sub, Result: blocked, Digest: digest("d2"), Now: t1, Approved: "install-1"})
		assert.False(t, gatestatus.DecisionChanged(first.Decision, updated.Decision), "an approval must not log or report a decision")
		assert.Equal(t, t0, *updated.Decision.EvaluatedAt, "the outcome dates from its first evaluation")
		assert.Equal(t, first.Decision.InputDigest, updated.Decision.InputDigest)
	})
}

func TestNextReportsAReasonTheAPIServerWouldRefuse(t *testing.T) {
	sub := &v1alpha1.Subscription{}
	res := &engine.Result{Health: []engine.Condition{{Type: "Degraded", Status: "False", Reason: "not valid!", Message: "fine"}}}
	status, problems := gatestatus.Next(tollgatev1alpha1.UpgradeGateStatus{}, gatestatus.Observation{Subscription: sub, Result: res, Digest: digest("d")})
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], `condition Degraded: the policies returned the reason "not valid!"`)
	assert.Equal(t, gatestatus.InvalidReason, status.Health[0].Reason)
	assert.Contains(t, status.Health[0].Message, `"not valid!"`)
}

func TestNewGateIsOwnedByItsSubscription(t *testing.T) {
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd", UID: "u1"}}
	gate := gatestatus.New(sub)
	assert.Equal(t, "ns", gate.Namespace)
	assert.Equal(t, "etcd", gate.Name)
	require.Len(t, gate.OwnerReferences, 1)
	assert.Equal(t, "Subscription", gate.OwnerReferences[0].Kind)
	assert.Equal(t, "operators.coreos.com/v1alpha1", gate.OwnerReferences[0].APIVersion)
	assert.True(t, *gate.OwnerReferences[0].Controller)
}
