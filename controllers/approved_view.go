package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// approvedView is a reader that shows some InstallPlans as approved. The gate's status that
// records an approval describes the state once the approval landed (the plan no longer
// awaits approval), so the approval's own update event finds nothing to write.
type approvedView struct {
	client.Reader
	plans map[client.ObjectKey]bool
}

// Get implements client.Reader.
func (v approvedView) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := v.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if plan, ok := obj.(*v1alpha1.InstallPlan); ok && v.plans[key] {
		plan.Spec.Approved = true
	}
	return nil
}

// List implements client.Reader.
func (v approvedView) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := v.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	if plans, ok := list.(*v1alpha1.InstallPlanList); ok {
		for i := range plans.Items {
			if v.plans[client.ObjectKeyFromObject(&plans.Items[i])] {
				plans.Items[i].Spec.Approved = true
			}
		}
	}
	return nil
}
