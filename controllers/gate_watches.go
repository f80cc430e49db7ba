package controllers

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
		Watches(&tollgatev1alpha1.UpgradeGate{}, r.mapTo(r.inNamespace)).
		Watches(&v1alpha1.ClusterServiceVersion{}, r.mapTo(r.byCSV)).
		Watches(&v1alpha1.InstallPlan{}, r.mapTo(r.byInstallPlan)).
		Watches(&v1alpha1.CatalogSource{}, r.mapTo(r.byCatalog)).
		Watches(&operatorsv2.OperatorCondition{}, r.mapTo(r.byOperatorCondition)).
		Watches(&operatorsv1.OperatorGroup{}, r.mapTo(r.inNamespace)).
		WatchesRawSource(source.Channel(r.Policies.changed, r.mapTo(r.all))).
		Build(r)
	if err != nil {
		return err
	}
	r.operands = newOperandWatches(c, mgr.GetCache(), mgr.GetRESTMapper(), r.mapTo)
	return nil
}

// mapTo turns a filter over the cached Subscriptions into an event handler. Operands may
// live in any namespace their OperatorGroup targets, so every Subscription is considered.
func (r *GateReconciler) mapTo(match func(obj client.Object, sub *v1alpha1.Subscription) bool) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		// The cache's objects are only read here, so they need not be copied.
		subs := &v1alpha1.SubscriptionList{}
		if err := r.List(ctx, subs, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list subscriptions to re-evaluate")
			return nil
		}
		var reqs []reconcile.Request
		for i := range subs.Items {
			if match(obj, &subs.Items[i]) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&subs.Items[i])})
			}
		}
		return reqs
	})
}

func (r *GateReconciler) isGlobalCatalog(obj client.Object) bool {
	_, ok := obj.(*v1alpha1.CatalogSource)
	return ok && obj.GetNamespace() == r.Input.GlobalCatalogNamespace
}

// all matches every Subscription (a policy change).
func (r *GateReconciler) all(client.Object, *v1alpha1.Subscription) bool { return true }

// inNamespace matches every Subscription of the object's namespace: an OperatorGroup
// changes its operands' namespaces; a gate's decision is a peer's input for bundled plans.
func (r *GateReconciler) inNamespace(obj client.Object, sub *v1alpha1.Subscription) bool {
	return obj.GetNamespace() == sub.Namespace
}

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

// byCatalog matches every Subscription that can see the catalog: all of them for the
// global catalog namespace, those of its namespace otherwise.
func (r *GateReconciler) byCatalog(obj client.Object, sub *v1alpha1.Subscription) bool {
	return r.isGlobalCatalog(obj) || obj.GetNamespace() == sub.Namespace
}

// byOperatorCondition matches the Subscription whose installed CSV the condition is named after.
func (r *GateReconciler) byOperatorCondition(obj client.Object, sub *v1alpha1.Subscription) bool {
	return sub.Status.InstalledCSV == obj.GetName()
}

// key is a shorthand used by the operand index.
func key(sub *v1alpha1.Subscription) types.NamespacedName { return client.ObjectKeyFromObject(sub) }
