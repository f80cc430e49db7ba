package bypass

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// InstallPlans are the plans that bypassed gate and that its status does not record yet,
// among its Subscription's pending plans (not Complete or Failed) and the plan it references:
// Manual, approved, without a readable approval record (tollgatev1alpha1.RecordedApproval).
// A pending plan is one whenever it is seen; the referenced plan, once OLM has completed (or
// failed) it, only when the gate's status last recorded it awaiting approval: Tollgate saw it
// before it was approved. A plan approved and completed before then is history.
func InstallPlans(gate *tollgatev1alpha1.UpgradeGate, pending []v1alpha1.InstallPlan, referenced *v1alpha1.InstallPlan) []*v1alpha1.InstallPlan {
	var out []*v1alpha1.InstallPlan
	add := func(p *v1alpha1.InstallPlan) {
		if unrecorded(p) && !Recorded(gate.Status.Bypasses, p.UID, tollgatev1alpha1.BypassFieldApproved, "true") &&
			!containsUID(out, p) {
			out = append(out, p)
		}
	}
	for i := range pending {
		add(&pending[i])
	}
	if referenced != nil && (!finished(referenced) || seenAwaiting(gate.Status, referenced)) {
		add(referenced)
	}
	return out
}

// unrecorded says whether plan is a Manual plan approved without a readable approval record.
func unrecorded(plan *v1alpha1.InstallPlan) bool {
	if plan.Spec.Approval != v1alpha1.ApprovalManual || !plan.Spec.Approved {
		return false
	}
	_, ok := tollgatev1alpha1.RecordedApproval(plan.Annotations)
	return !ok
}

// finished says whether OLM is done with plan: Complete or Failed.
func finished(plan *v1alpha1.InstallPlan) bool {
	return plan.Status != nil && (plan.Status.Phase == v1alpha1.InstallPlanPhaseComplete || plan.Status.Phase == v1alpha1.InstallPlanPhaseFailed)
}

// seenAwaiting says whether status, as last written, references plan while a plan awaited
// manual approval: Tollgate saw it waiting.
func seenAwaiting(status tollgatev1alpha1.UpgradeGateStatus, plan *v1alpha1.InstallPlan) bool {
	ref := status.InstallPlanRef
	if ref == nil || ref.Name != plan.Name || ref.UID != "" && ref.UID != plan.UID {
		return false
	}
	return meta.IsStatusConditionTrue(status.Conditions, tollgatev1alpha1.ConditionInstallPlanAwaitingManualApproval)
}

func containsUID(plans []*v1alpha1.InstallPlan, p *v1alpha1.InstallPlan) bool {
	for _, q := range plans {
		if q.UID == p.UID && q.Name == p.Name {
			return true
		}
	}
	return false
}
