package controllers

import (
	"context"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
)

// GeneratedByAnnotation is the annotation OLM puts on a Subscription it creates for a
// dependency: the name of the InstallPlan that created it.
const GeneratedByAnnotation = "olm.generated-by"

// dependencyTakeOversTotal counts the dependency Subscriptions switched to Manual.
var dependencyTakeOversTotal = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "tollgate_dependency_subscriptions_gated_total",
	Help: "Subscriptions OLM created for a dependency of a plan Tollgate approved, switched from Automatic to Manual so that their upgrades are gated too.",
})

func init() { metrics.Registry.MustRegister(dependencyTakeOversTotal) }

// takesOver says whether an Automatic Subscription is switched to Manual: every one with
// --take-over-approval, and, unless --leave-dependencies-automatic, one OLM created for a
// dependency of a plan Tollgate approved. OLM creates those Automatic, so without this every
// later upgrade of a dependency would bypass the gate Tollgate applied to its install.
func (r *GateReconciler) takesOver(ctx context.Context, sub *v1alpha1.Subscription) (bool, error) {
	if r.TakeOverApproval {
		return true, nil
	}
	if r.LeaveDependenciesAutomatic {
		return false, nil
	}
	return r.approvedDependency(ctx, sub)
}

// approvedDependency says whether OLM created sub for a dependency of a plan that carries
// Tollgate's approval record.
func (r *GateReconciler) approvedDependency(ctx context.Context, sub *v1alpha1.Subscription) (bool, error) {
	name := sub.Annotations[GeneratedByAnnotation]
	if name == "" {
		return false, nil
	}
	plan := &v1alpha1.InstallPlan{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: sub.Namespace, Name: name}, plan); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get InstallPlan %s/%s, which created Subscription %s: %w", sub.Namespace, name, sub.Name, err)
	}
	_, ok := tollgatev1alpha1.RecordedApproval(plan.Annotations)
	return ok && planCreates(plan, sub.Name), nil
}

// planCreates says whether plan has a Subscription step that creates the Subscription name.
func planCreates(plan *v1alpha1.InstallPlan, name string) bool {
	if plan.Status == nil {
		return false
	}
	for _, s := range plan.Status.Plan {
		if s != nil && s.Resource.Kind == v1alpha1.SubscriptionKind && s.Resource.Name == name {
			return true
		}
	}
	return false
}

// dependencyNotTakenOver is the AutomaticApproval condition of a dependency Subscription that
// Tollgate may not switch to Manual (its RBAC grants no patch on Subscriptions): reported on
// the gate, never a reconcile error.
func dependencyNotTakenOver(sub *v1alpha1.Subscription, mode v1alpha1.Approval) metav1.Condition {
	c := gatestatus.AutomaticApproval(sub, mode, false)
	c.Message = fmt.Sprintf("OLM created this Subscription Automatic for a dependency of InstallPlan %s, which Tollgate approved, and Tollgate may not switch it to Manual: "+
		"its RBAC grants no patch on Subscriptions (config/rbac grants it). ", sub.Annotations[GeneratedByAnnotation]) + c.Message
	return c
}

// watchDependencyOperands adds to the Subscription key's operand watches the kinds that the
// decisions on its plans' dependencies read (the operands of a CSV a dependency replaces), so
// that a change of their health re-evaluates the Subscription that approves the plan.
func (r *GateReconciler) watchDependencyOperands(ctx context.Context, key types.NamespacedName, dec *approval.Decision) error {
	gvks := slices.Clone(dec.OperandGVKs)
	extra := false
	for _, p := range dec.Peers {
		if p.Dependency == nil || p.Document == nil {
			continue
		}
		for _, g := range p.Document.OperandGVKs {
			if !slices.Contains(gvks, g) {
				gvks, extra = append(gvks, g), true
			}
		}
	}
	if !extra {
		return nil
	}
	return r.operands.watch(ctx, key, gvks, dec.OperandNamespaces)
}
