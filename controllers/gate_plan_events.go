package controllers

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// approvalPriority ranks the Subscriptions of a plan awaiting approval ahead of other work in
// the queue: at start-up, thousands of unchanged Subscriptions are queued at once (at a low
// priority), and an approval should not wait for all of them.
const approvalPriority = 10

// planEvents maps an InstallPlan's events onto the Subscriptions it affects (byInstallPlan),
// like the map handler of the other kinds, with two differences: the Subscription whose
// approval an event brings back is left out (its approving reconcile has it evaluated again
// after olmStepDelay, see approveThen),
// and the Subscriptions of a plan awaiting approval go first.
type planEvents struct{ r *GateReconciler }

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Create: a plan of the start-up's initial list that awaits nothing goes with the rest of
// that list, at a low priority.
func (h planEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.enqueue(ctx, q, e.IsInInitialList, e.Object)
}

func (h planEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.enqueue(ctx, q, false, e.ObjectNew, e.ObjectOld)
}

func (h planEvents) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.r.approved.forget(e.Object)
	h.enqueue(ctx, q, false, e.Object)
}

func (h planEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.enqueue(ctx, q, false, e.Object)
}

// enqueue queues the Subscriptions that plan (as it is now, and as it was) affects.
func (h planEvents) enqueue(ctx context.Context, q queue, initial bool, plan client.Object, was ...client.Object) {
	reqs := map[reconcile.Request]bool{}
	for _, obj := range append([]client.Object{plan}, was...) {
		for _, req := range h.r.requests(ctx, sameNamespace(obj), h.r.byInstallPlan, obj) {
			reqs[req] = true
		}
	}
	if by, ok := h.r.approved.take(plan); ok {
		delete(reqs, reconcile.Request{NamespacedName: by})
	}
	waits := awaitingApproval(plan.(*v1alpha1.InstallPlan))
	for req := range reqs {
		switch {
		case waits:
			h.r.approvals.queue(q, req)
		case initial:
			addAt(q, req, handler.LowPriority)
		default:
			q.Add(req)
		}
	}
}

// addAt queues req at priority, when q has priorities (else as q.Add does).
func addAt(q queue, req reconcile.Request, priority int) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priority)}, req)
		return
	}
	q.Add(req)
}

// awaitingApproval says whether plan waits for a manual approval.
func awaitingApproval(plan *v1alpha1.InstallPlan) bool {
	return !plan.Spec.Approved && plan.Status != nil && plan.Status.Phase == v1alpha1.InstallPlanPhaseRequiresApproval
}
