package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
)

// TestAnEventGoesFirstWhereAPlanAwaitsApproval: an event on another kind (here an
// OperatorCondition, as when an operator lifts Upgradeable=False) queues a Subscription whose
// plan awaits approval ahead of other work, and the others at the default priority. The
// objects come from controller-runtime's fake client: the mapping is pure code.
func TestAnEventGoesFirstWhereAPlanAwaitsApproval(t *testing.T) {
	sub := func(name, plan string) *v1alpha1.Subscription {
		s := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Status: v1alpha1.SubscriptionStatus{InstalledCSV: name + ".v1", CurrentCSV: name + ".v2"}}
		if plan != "" {
			s.Status.InstallPlanRef = &corev1.ObjectReference{Namespace: "ns", Name: plan}
		}
		return s
	}
	plan := func(name string, approved bool, phase v1alpha1.InstallPlanPhase) *v1alpha1.InstallPlan {
		return &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec:   v1alpha1.InstallPlanSpec{Approved: approved},
			Status: &v1alpha1.InstallPlanStatus{Phase: phase}}
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(
		sub("waiting", "install-w"), plan("install-w", false, v1alpha1.InstallPlanPhaseRequiresApproval),
		sub("approved", "install-a"), plan("install-a", true, v1alpha1.InstallPlanPhaseRequiresApproval),
		sub("planning", "install-p"), plan("install-p", false, v1alpha1.InstallPlanPhasePlanning),
		sub("gone", "install-gone"),
		sub("none", ""),
	).Build()
	h := (&GateReconciler{Client: c}).mapTo(sameNamespace, all)
	condition := func(rv string) *operatorsv2.OperatorCondition {
		return &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "waiting.v1", ResourceVersion: rv}}
	}
	ctx := context.Background()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	rest := func(priority int) map[types.NamespacedName]int {
		return map[types.NamespacedName]int{key("waiting"): approvalPriority,
			key("approved"): priority, key("planning"): priority, key("gone"): priority, key("none"): priority}
	}

	t.Run("a change", func(t *testing.T) {
		q := newTestQueue(t)
		h.Update(ctx, event.UpdateEvent{ObjectOld: condition("1"), ObjectNew: condition("2")}, q)
		assert.Equal(t, rest(0), drainQueue(q))
	})
	t.Run("the start-up's initial list: the others go low", func(t *testing.T) {
		q := newTestQueue(t)
		h.Create(ctx, event.CreateEvent{Object: condition("1"), IsInInitialList: true}, q)
		assert.Equal(t, rest(handler.LowPriority), drainQueue(q))
	})
	t.Run("a resync: the others go low", func(t *testing.T) {
		q := newTestQueue(t)
		h.Update(ctx, event.UpdateEvent{ObjectOld: condition("1"), ObjectNew: condition("1")}, q)
		assert.Equal(t, rest(handler.LowPriority), drainQueue(q))
	})
}

// TestTheEvaluationAfterAnApprovalDoesNotGoFirst: the gate's evaluation after its approval is
// queued at the default priority, not at the approval's, so it does not go ahead of the
// approvals still waiting.
func TestTheEvaluationAfterAnApprovalDoesNotGoFirst(t *testing.T) {
	q := newTestQueue(t)
	approving, waiting := types.NamespacedName{Namespace: "a", Name: "etcd"}, types.NamespacedName{Namespace: "b", Name: "etcd"}
	addAt(q, reconcile.Request{NamespacedName: approving}, approvalPriority)
	req, priority, _ := q.GetWithPriority()
	require.Equal(t, approvalPriority, priority)

	res := (&GateReconciler{queue: q}).later(approving, 10*time.Millisecond)
	q.Done(req)
	assert.Zero(t, res, "queued by later itself, not by the result, which would keep the approval's priority")
	addAt(q, reconcile.Request{NamespacedName: waiting}, approvalPriority)
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, []types.NamespacedName{waiting, approving}, queueOrder(q))
	assert.Equal(t, map[types.NamespacedName]int{}, drainQueue(q))

	res = (&GateReconciler{}).later(approving, time.Second)
	assert.Equal(t, time.Second, res.RequeueAfter, "without the controller's queue, the result requeues")
}

func newTestQueue(t *testing.T) priorityqueue.PriorityQueue[reconcile.Request] {
	q := priorityqueue.New[reconcile.Request]("test-" + t.Name())
	t.Cleanup(q.ShutDown)
	return q
}

// drainQueue takes every ready request and its priority.
func drainQueue(q priorityqueue.PriorityQueue[reconcile.Request]) map[types.NamespacedName]int {
	got := map[types.NamespacedName]int{}
	for _, t := range takeAll(q) {
		got[t.key] = t.priority
	}
	return got
}

// queueOrder takes every ready request, in the order the queue gives them.
func queueOrder(q priorityqueue.PriorityQueue[reconcile.Request]) []types.NamespacedName {
	var got []types.NamespacedName
	for _, t := range takeAll(q) {
		got = append(got, t.key)
	}
	return got
}

type taken struct {
	key      types.NamespacedName
	priority int
}

// takeAll takes every ready request with its priority, in the order the queue gives them.
func takeAll(q priorityqueue.PriorityQueue[reconcile.Request]) []taken {
	var got []taken
	for q.Len() > 0 {
		req, priority, _ := q.GetWithPriority()
		got = append(got, taken{req.NamespacedName, priority})
		q.Done(req)
	}
	return got
}
