package controllers

import (
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// Verdict is what one Subscription's gate says about the CSV it wants to install.
type Verdict struct {
	// Subscription is namespace/name, for messages.
	Subscription string
	// Allowed is the gate's decision.
	Allowed bool
	// BlockedBy is the first standing denial code when not allowed.
	BlockedBy string
	// Mode is the gate's effective mode; only Enforce approves.
	Mode tollgatev1alpha1.Mode
	// Approval is the Subscription's installPlanApproval; Automatic plans are OLM's.
	Approval v1alpha1.Approval
}

// Approvable says whether Tollgate may approve plan, given the verdict for every CSV it
// lists (keyed by CSV name), and if not, why. Only Manual plans that are not approved yet
// and wait in RequiresApproval qualify, and every CSV they list must be allowed by an
// Enforce-mode gate: OLM bundles a namespace's pending installs into one plan, so approving
// it approves all of them.
func Approvable(plan *v1alpha1.InstallPlan, verdicts map[string]Verdict) (bool, string) {
	switch {
	case plan.Spec.Approval != v1alpha1.ApprovalManual:
		return false, fmt.Sprintf("plan approval is %q, not Manual", plan.Spec.Approval)
	case plan.Spec.Approved:
		return false, "plan is already approved"
	case plan.Status == nil || plan.Status.Phase != v1alpha1.InstallPlanPhaseRequiresApproval:
		phase := v1alpha1.InstallPlanPhaseNone
		if plan.Status != nil {
			phase = plan.Status.Phase
		}
		return false, fmt.Sprintf("plan phase is %q, not RequiresApproval", phase)
	case len(plan.Spec.ClusterServiceVersionNames) == 0:
		return false, "plan lists no ClusterServiceVersion"
	}
	var blocked []string
	for _, csv := range plan.Spec.ClusterServiceVersionNames {
		v, ok := verdicts[csv]
		switch {
		case !ok:
			blocked = append(blocked, csv+" (no Subscription with a gate wants it)")
		case !v.Allowed:
			blocked = append(blocked, fmt.Sprintf("%s (%s: %s)", csv, v.Subscription, v.BlockedBy))
		case v.Mode != tollgatev1alpha1.ModeEnforce:
			blocked = append(blocked, fmt.Sprintf("%s (%s is in %s mode)", csv, v.Subscription, v.Mode))
		case v.Approval != v1alpha1.ApprovalManual:
			blocked = append(blocked, fmt.Sprintf("%s (%s approves automatically)", csv, v.Subscription))
		}
	}
	if len(blocked) > 0 {
		return false, "blocked: " + strings.Join(blocked, ", ")
	}
	return true, ""
}

// EffectiveMode is the gate's spec.mode, or def when empty.
func EffectiveMode(gate *tollgatev1alpha1.UpgradeGate, def tollgatev1alpha1.Mode) tollgatev1alpha1.Mode {
	if gate != nil && gate.Spec.Mode != "" {
		return gate.Spec.Mode
	}
	return def
}

// ApprovalOf is the Subscription's installPlanApproval; OLM's default is Automatic.
func ApprovalOf(sub *v1alpha1.Subscription) v1alpha1.Approval {
	if sub.Spec == nil || sub.Spec.InstallPlanApproval == "" {
		return v1alpha1.ApprovalAutomatic
	}
	return sub.Spec.InstallPlanApproval
}
