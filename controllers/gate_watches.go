package controllers

import (
	"cmp"
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// SetupWithManager registers the reconciler: Subscriptions are the root; every other kind
// maps onto the Subscriptions it affects.
func (r *GateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("upgradegate").
		For(&v1alpha1.Subscription{}).
		// A gate's spec (overrides, mode) is its own Subscription's input; its status is
		// Tollgate's output, and a bundled plan's peers are judged on their own state, so a
		// status write re-evaluates nothing.
		Watches(&tollgatev1alpha1.UpgradeGate{}, &handler.EnqueueRequestForObject{},
			builder.WithPredicates(r.written.forgetSeen(), predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.ClusterServiceVersion{}, r.mapTo(sameNamespace, r.orAwaitingApproval(r.byCSV))).
		Watches(&v1alpha1.InstallPlan{}, planEvents{r}).
		Watches(&v1alpha1.CatalogSource{}, r.mapTo(r.catalogScope, all)).
		Watches(&operatorsv2.OperatorCondition{}, r.mapTo(sameNamespace, r.orAwaitingApproval(r.byOperatorCondition))).
		Watches(&operatorsv1.OperatorGroup{}, r.mapTo(sameNamespace, all)).
		WatchesRawSource(source.Channel(r.Policies.changed, r.mapTo(everywhere, all))).
		// The priority queue: start-up's initial lists go at a low priority, and the
		// Subscriptions of plans awaiting approval first (mapTo, planEvents).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers, NewQueue: r.newQueue(mgr)}).
		Build(r)
	if err != nil {
		return err
	}
	// Every read goes to the cache, operands too (readOperands).
	r.operands, r.reader = readOperands(c, mgr)
	return nil
}

// newQueue builds controller-runtime's priority queue, as UsePriorityQueue would, and keeps
// it: a gate's evaluation after its approval is queued at the default priority (later),
// rather than inherit the approval's and go ahead of the approvals still waiting.
func (r *GateReconciler) newQueue(mgr ctrl.Manager) func(string, workqueue.TypedRateLimiter[reconcile.Request]) queue {
	return func(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) queue {
		r.queue = priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.Log = mgr.GetLogger().WithValues("controller", name)
			o.RateLimiter = limiter
		})
		return r.queue
	}
}

// A scope narrows the Subscriptions an event can affect to a List the cache answers from its
// namespace index, so an event costs what it can affect rather than every Subscription.
type scope func(obj client.Object) []client.ListOption

// sameNamespace: the object's namespace. OLM's objects affect only the Subscriptions beside them.
func sameNamespace(obj client.Object) []client.ListOption {
	return []client.ListOption{client.InNamespace(obj.GetNamespace())}
}

// everywhere: every Subscription (a policy change).
func everywhere(client.Object) []client.ListOption { return nil }

// catalogScope: a catalog of the global catalog namespace is visible to every Subscription,
// any other only to those of its namespace.
func (r *GateReconciler) catalogScope(obj client.Object) []client.ListOption {
	if obj.GetNamespace() == r.Input.GlobalCatalogNamespace {
		return everywhere(obj)
	}
	return sameNamespace(obj)
}

// A match says whether an event on obj affects sub.
type match func(obj client.Object, sub *v1alpha1.Subscription) bool

// mapTo turns a filter over the cached Subscriptions in scope into an event handler. A
// Subscription whose plan awaits approval goes first (approvalPriority): the event may be the
// one that lets its plan be approved. The others go at the default priority, which
// handler.Funcs lowers for a start-up's initial list and for a resync.
func (r *GateReconciler) mapTo(in scope, m match) handler.EventHandler {
	enqueue := func(ctx context.Context, q queue, objs ...client.Object) {
		first := map[reconcile.Request]bool{}
		for _, obj := range objs {
			r.matching(ctx, in(obj), m, obj, func(sub *v1alpha1.Subscription, req reconcile.Request) {
				if _, seen := first[req]; !seen { // an update's old and new object list the same Subscriptions
					first[req] = r.awaitsApproval(ctx, sub)
				}
			})
		}
		for req, f := range first {
			if f {
				r.approvals.queue(q, req)
			} else {
				q.Add(req)
			}
		}
	}
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, e event.CreateEvent, q queue) { enqueue(ctx, q, e.Object) },
		UpdateFunc:  func(ctx context.Context, e event.UpdateEvent, q queue) { enqueue(ctx, q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, q queue) { enqueue(ctx, q, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { enqueue(ctx, q, e.Object) },
	}
}

// requests are the cached Subscriptions listed with opts that an event on obj affects.
func (r *GateReconciler) requests(ctx context.Context, opts []client.ListOption, m match, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	r.matching(ctx, opts, m, obj, func(_ *v1alpha1.Subscription, req reconcile.Request) {
		reqs = append(reqs, req)
	})
	return reqs
}

// matching calls each with every cached Subscription listed with opts that an event on obj
// affects. The Subscription is the cache's own object: each reads it and keeps nothing.
func (r *GateReconciler) matching(ctx context.Context, opts []client.ListOption, m match, obj client.Object, each func(*v1alpha1.Subscription, reconcile.Request)) {
	subs := &v1alpha1.SubscriptionList{}
	if err := r.List(ctx, subs, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list subscriptions to re-evaluate")
		return
	}
	for i := range subs.Items {
		if sub := &subs.Items[i]; m(obj, sub) {
			each(sub, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(sub)})
		}
	}
}

// awaitsApproval says whether the plan sub references (status.installPlanRef), as cached,
// awaits approval.
func (r *GateReconciler) awaitsApproval(ctx context.Context, sub *v1alpha1.Subscription) bool {
	ref := sub.Status.InstallPlanRef
	if ref == nil {
		return false
	}
	plan := &v1alpha1.InstallPlan{}
	key := types.NamespacedName{Namespace: cmp.Or(ref.Namespace, sub.Namespace), Name: ref.Name}
	return r.Get(ctx, key, plan, client.UnsafeDisableDeepCopy) == nil && awaitingApproval(plan)
}

// all matches every Subscription in scope.
func all(client.Object, *v1alpha1.Subscription) bool { return true }

// byCSV matches the Subscription that installed the CSV or wants it.
func (r *GateReconciler) byCSV(obj client.Object, sub *v1alpha1.Subscription) bool {
	return sub.Status.InstalledCSV == obj.GetName() || sub.Status.CurrentCSV == obj.GetName()
}

// byInstallPlan matches the Subscriptions whose current CSV the plan lists, and the one
// that references it.
func (r *GateReconciler) byInstallPlan(obj client.Object, sub *v1alpha1.Subscription) bool {
	plan := obj.(*v1alpha1.InstallPlan)
	if ref := sub.Status.InstallPlanRef; ref != nil && ref.Name == plan.Name {
		return true
	}
	return sub.Status.CurrentCSV != "" && slices.Contains(plan.Spec.ClusterServiceVersionNames, sub.Status.CurrentCSV)
}

// byOperatorCondition matches the Subscription whose installed CSV the condition is named after.
func (r *GateReconciler) byOperatorCondition(obj client.Object, sub *v1alpha1.Subscription) bool {
	return sub.Status.InstalledCSV == obj.GetName()
}

// orAwaitingApproval widens m to every Subscription of the namespace whose plan awaits
// approval: a dependency that plan installs may replace the object's CSV, and the decision on
// that dependency reads the CSV and its OperatorCondition; only a Subscription that waits on
// the plan approves it.
func (r *GateReconciler) orAwaitingApproval(m match) match {
	return func(obj client.Object, sub *v1alpha1.Subscription) bool {
		return m(obj, sub) || r.awaitsApproval(context.Background(), sub)
	}
}
