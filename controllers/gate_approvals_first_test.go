package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/policies"
)

func TestStatusWorkWaitsWhileApprovalsKeepComing(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "etcd"}
	var a approvalsFirst
	t0 := time.Now()
	assert.Zero(t, a.wait(key, t0), "no approval queued: evaluate now")

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	a.queue(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "other", Name: "sub"}})
	assert.Equal(t, 1, q.Len(), "the approval is queued")
	queued := time.Unix(0, a.last.Load())
	assert.WithinDuration(t, time.Now(), queued, time.Second)

	assert.Equal(t, approvalQuiet, a.wait(key, queued), "right after an approval: wait for the quiet")
	assert.Equal(t, approvalQuiet/5, a.wait(key, queued.Add(4*approvalQuiet/5)), "the rest of the quiet")
	assert.Zero(t, a.wait(key, queued.Add(approvalQuiet)), "quiet: evaluate now")

	// Approvals that keep coming hold an evaluation at most maxApprovalWait in all.
	at, waited := queued, time.Duration(0)
	for waited < 2*maxApprovalWait {
		a.last.Store(at.UnixNano()) // another approval queued just now
		w := a.wait(key, at)
		if w == 0 {
			break
		}
		waited += w
		at = at.Add(w)
	}
	assert.Equal(t, maxApprovalWait, waited, "held no longer than maxApprovalWait")
	a.last.Store(at.UnixNano())
	assert.Equal(t, approvalQuiet, a.wait(key, at), "a new wait starts after an evaluation")
}

// Only an evaluation that approves nothing and updates a decision of the policies in service
// waits for the approvals under way.
func TestOnlyStatusWorkWaitsForApprovals(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{Policies: policies.FS})
	require.NoError(t, err)
	awaitingPlan := v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Name: "install-1"},
		Status: &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval}}
	approvedPlan := *awaitingPlan.DeepCopy()
	approvedPlan.Spec.Approved = true
	tests := []struct {
		name  string
		gate  func(*tollgatev1alpha1.UpgradeGate)
		plans []v1alpha1.InstallPlan
		waits bool
	}{
		{"the plan just approved", nil, []v1alpha1.InstallPlan{approvedPlan}, true},
		{"nothing pending", nil, nil, true},
		{"a plan awaiting approval", nil, []v1alpha1.InstallPlan{approvedPlan, awaitingPlan}, false},
		{"no decision yet", func(g *tollgatev1alpha1.UpgradeGate) { g.Status = tollgatev1alpha1.UpgradeGateStatus{} }, nil, false},
		{"decided by other policies", func(g *tollgatev1alpha1.UpgradeGate) { g.Status.Decision.PolicyRevision = "older" }, nil, false},
		{"the gate's spec changed", func(g *tollgatev1alpha1.UpgradeGate) { g.Generation = 2 }, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &GateReconciler{Policies: NewPolicies(e)}
			r.approvals.last.Store(time.Now().UnixNano())
			gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd", Generation: 1}}
			gate.Status.ObservedGeneration = 1
			gate.Status.Decision.EvaluatedAt = &metav1.Time{Time: time.Now()}
			gate.Status.Decision.PolicyRevision = e.Revision()
			if tt.gate != nil {
				tt.gate(gate)
			}
			wait := r.statusWork(gate, &input.Document{PendingInstallPlans: tt.plans})
			if tt.waits {
				assert.Positive(t, wait)
				assert.LessOrEqual(t, wait, approvalQuiet)
			} else {
				assert.Zero(t, wait)
			}
		})
	}
}
