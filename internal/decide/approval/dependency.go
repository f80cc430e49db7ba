package approval

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// dependency is the decision on dep, the Subscription plan would create for csv, gathered
// and evaluated as that Subscription (status.currentCSV csv, its installPlanRef the plan)
// before OLM creates it: a first install of its package, or, when csv replaces a CSV of the
// namespace, an upgrade of that CSV, through every policy and pack. Evaluated once per plan
// and CSV in a session.
func (s *session) dependency(ctx context.Context, plan *v1alpha1.InstallPlan, csv string, dep *v1alpha1.Dependency) (*member, error) {
	key := types.NamespacedName{Namespace: plan.Name, Name: csv}
	if m, ok := s.deps[key]; ok {
		return m, nil
	}
	sub := dep.Object.DeepCopy()
	sub.Namespace, sub.Name = plan.Namespace, dep.Subscription
	sub.Status = v1alpha1.SubscriptionStatus{
		CurrentCSV: csv,
		State:      v1alpha1.SubscriptionStateUpgradePending,
		InstallPlanRef: &corev1.ObjectReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "InstallPlan",
			Namespace: plan.Namespace, Name: plan.Name, UID: plan.UID,
		},
	}
	doc, err := s.b.BuildFor(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("gather %s, the Subscription InstallPlan %s/%s creates for %s: %w", dep.Subscription, plan.Namespace, plan.Name, csv, err)
	}
	doc.SetDependency(plan)
	m := &member{doc: doc, result: s.d.Policies.Evaluate(ctx, doc.Doc)}
	s.deps[key] = m
	return m, nil
}
