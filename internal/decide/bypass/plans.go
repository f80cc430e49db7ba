package bypass

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// Found is a plan that went around its gate, and how.
type Found struct {
	Plan *v1alpha1.InstallPlan
	Change
}

// InstallPlans are the plans that bypassed gate and that its status does not record yet, each
// with how, among its Subscription's pending plans (not Complete or Failed) and the plan it
// references: Manual plans approved without a readable approval record, or run unapproved
// (ChangeOf). A pending plan is one whenever it is seen; the referenced plan, once OLM has
// completed (or failed) it, only when the gate's status last recorded it awaiting approval:
// Tollgate saw it before it was approved. A plan approved and completed before then is history.
func InstallPlans(gate *tollgatev1alpha1.UpgradeGate, pending []v1alpha1.InstallPlan, referenced *v1alpha1.InstallPlan) []Found {
	var out []Found
	add := func(p *v1alpha1.InstallPlan) {
		c, ok := ChangeOf(p)
		if ok && !Recorded(gate.Status.Bypasses, p.UID, c.Field, c.To) && !containsUID(out, p) {
			out = append(out, Found{Plan: p, Change: c})
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

// Change is how a plan went around its gate: the field set (Field, at Path) to To.
type Change struct {
	Field, To string
	Path      []string
}

// ChangeOf says how the Manual plan went around its gate, if it did: approved without a
// readable approval record; or run without an approval, its status moved to Installing (OLM
// runs a plan in that phase, approved or not, and moves one there only once approved) or left
// Complete by such a run. A plan OLM failed unapproved (a bundle it could not unpack) ran
// nothing.
func ChangeOf(plan *v1alpha1.InstallPlan) (Change, bool) {
	if plan.Spec.Approval != v1alpha1.ApprovalManual {
		return Change{}, false
	}
	if plan.Spec.Approved {
		_, ok := tollgatev1alpha1.RecordedApproval(plan.Annotations)
		return Change{Field: tollgatev1alpha1.BypassFieldApproved, To: "true", Path: []string{"spec", "approved"}}, !ok
	}
	if plan.Status == nil || plan.Status.Phase != v1alpha1.InstallPlanPhaseInstalling && plan.Status.Phase != v1alpha1.InstallPlanPhaseComplete {
		return Change{}, false
	}
	// The write went to Installing; Complete is OLM's run after it, the same bypass.
	return Change{Field: tollgatev1alpha1.BypassFieldPhase, To: string(v1alpha1.InstallPlanPhaseInstalling), Path: []string{"status", "phase"}}, true
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

func containsUID(found []Found, p *v1alpha1.InstallPlan) bool {
	for _, f := range found {
		if f.Plan.UID == p.UID && f.Plan.Name == p.Name {
			return true
		}
	}
	return false
}
