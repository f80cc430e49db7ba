package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// SetupWithManager watches the ExtensionGates (their spec), the ClusterExtension of each, every
// ClusterCatalog (any gate may select it) and the policies, and each operand kind once a gate
// reads it.
func (r *ExtensionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reevaluate <= 0 {
		r.Reevaluate = DefaultReevaluate
	}
	if r.HeldRecheck <= 0 {
		r.HeldRecheck = DefaultHeldRecheck
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("extensiongate").
		For(&tollgatev1alpha1.ExtensionGate{}, builder.WithPredicates(r.written.forgetSeen(), predicate.GenerationChangedPredicate{})).
		Watches(&olmv1.ClusterExtension{}, handler.EnqueueRequestsFromMapFunc(sameName)).
		Watches(&olmv1.ClusterCatalog{}, handler.EnqueueRequestsFromMapFunc(r.everyGate)).
		WatchesRawSource(source.Channel(r.Policies.extensions, handler.EnqueueRequestsFromMapFunc(r.everyGate))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Build(r)
	if err != nil {
		return err
	}
	r.operands, r.reader = readOperands(c, mgr)
	return nil
}

// sameName is the gate of the ClusterExtension: the ExtensionGate of its name.
func sameName(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: keyOf(obj.GetName())}}
}

// everyGate is every ExtensionGate.
func (r *ExtensionReconciler) everyGate(ctx context.Context, _ client.Object) []reconcile.Request {
	gates := &tollgatev1alpha1.ExtensionGateList{}
	if err := r.List(ctx, gates); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(gates.Items))
	for _, g := range gates.Items {
		out = append(out, reconcile.Request{NamespacedName: keyOf(g.Name)})
	}
	return out
}
