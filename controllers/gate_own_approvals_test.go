package controllers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// TestPlanEvents: which Subscriptions a plan's event queues, and how urgently. The
// Subscriptions come from controller-runtime's fake client: the mapping is pure code.
func TestPlanEvents(t *testing.T) {
	etcd, redis := types.NamespacedName{Namespace: "ns", Name: "etcd"}, types.NamespacedName{Namespace: "ns", Name: "redis"}
	sub := func(key types.NamespacedName, csv string) *v1alpha1.Subscription {
		return &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Status: v1alpha1.SubscriptionStatus{CurrentCSV: csv}}
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(sub(etcd, "etcd.v2"), sub(redis, "redis.v2")).Build()
	plan := func(rv string, approved bool, phase v1alpha1.InstallPlanPhase) *v1alpha1.InstallPlan {
		return &v1alpha1.InstallPlan{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "install-1", ResourceVersion: rv},
			Spec:       v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"etcd.v2", "redis.v2"}, Approved: approved},
			Status:     &v1alpha1.InstallPlanStatus{Phase: phase},
		}
	}
	waiting, approved := plan("7", false, v1alpha1.InstallPlanPhaseRequiresApproval), plan("8", true, v1alpha1.InstallPlanPhaseRequiresApproval)
	ctx := context.Background()

	t.Run("a plan awaiting approval queues its Subscriptions first, even from the initial list", func(t *testing.T) {
		h, q := planEvents{&GateReconciler{Client: c}}, newTestQueue(t)
		h.Create(ctx, event.CreateEvent{Object: waiting, IsInInitialList: true}, q)
		assert.Equal(t, map[types.NamespacedName]int{etcd: approvalPriority, redis: approvalPriority}, drainQueue(q))
	})
	t.Run("another plan of the initial list goes with it, at a low priority", func(t *testing.T) {
		h, q := planEvents{&GateReconciler{Client: c}}, newTestQueue(t)
		h.Create(ctx, event.CreateEvent{Object: plan("7", false, v1alpha1.InstallPlanPhasePlanning), IsInInitialList: true}, q)
		assert.Equal(t, map[types.NamespacedName]int{etcd: handler.LowPriority, redis: handler.LowPriority}, drainQueue(q))
	})
	t.Run("the approval's own event queues the plan's other Subscriptions, once", func(t *testing.T) {
		r := &GateReconciler{Client: c}
		h, q := planEvents{r}, newTestQueue(t)
		r.approved.record(approved, etcd)
		h.Update(ctx, event.UpdateEvent{ObjectOld: waiting, ObjectNew: approved}, q)
		assert.Equal(t, map[types.NamespacedName]int{redis: 0}, drainQueue(q), "not the approver: its status records the approved state")
		h.Update(ctx, event.UpdateEvent{ObjectOld: approved, ObjectNew: approved}, q)
		assert.Len(t, drainQueue(q), 2, "once only")
	})
	t.Run("an earlier version's event keeps the memory; a deletion ends it", func(t *testing.T) {
		r := &GateReconciler{Client: c}
		h, q := planEvents{r}, newTestQueue(t)
		r.approved.record(approved, etcd)
		h.Create(ctx, event.CreateEvent{Object: waiting}, q)
		require.Len(t, drainQueue(q), 2)
		_, ok := r.approved.take(approved)
		assert.True(t, ok, "the approval's own event is still to come")
		r.approved.record(approved, etcd)
		h.Delete(ctx, event.DeleteEvent{Object: approved}, q)
		assert.Len(t, drainQueue(q), 2)
		_, ok = r.approved.take(approved)
		assert.False(t, ok)
	})
}
