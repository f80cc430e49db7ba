package controllers

import (
	"regexp"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// reasonPattern is what metav1.Condition accepts as a reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// observation is everything one evaluation contributes to an UpgradeGate's status.
type observation struct {
	generation int64
	sub        *v1alpha1.Subscription
	result     *engine.Result
	// digest identifies the input; it is computed only when the outcome changed.
	digest func() string
	// extra are conditions Tollgate originates itself (AutomaticApproval).
	extra []metav1.Condition
	// approved names a plan approved during this reconcile.
	approved string
	now      metav1.Time
}

// nextStatus computes the gate's status from an observation. Condition transition times
// move only when a status changes, and evaluatedAt only when the decision or its input
// changed, so a reconcile on unchanged state produces an equal status and no write.
func nextStatus(old tollgatev1alpha1.UpgradeGateStatus, o observation) tollgatev1alpha1.UpgradeGateStatus {
	res := o.result
	next := tollgatev1alpha1.UpgradeGateStatus{
		ObservedGeneration: o.generation,
		InstalledCSV:       o.sub.Status.InstalledCSV,
		CurrentCSV:         o.sub.Status.CurrentCSV,
		State:              res.State,
		UpToDate:           res.UpToDate,
		InstallPlanRef:     o.sub.Status.InstallPlanRef,
		CatalogStatus:      res.CatalogStatus,
	}
	if o.sub.Spec != nil {
		next.Package = o.sub.Spec.Package
	}
	next.Conditions = mergeConditions(old.Conditions, append(toConditions(res.Conditions, o.generation), o.extra...), o.now)
	next.Health = mergeConditions(old.Health, toConditions(res.Health, o.generation), o.now)

	next.Decision = tollgatev1alpha1.Decision{
		Allowed:                 res.Decision.Allowed,
		BlockedBy:               res.Decision.BlockedBy(),
		Denials:                 res.Decision.Denials,
		PolicyRevision:          res.Revision,
		InputDigest:             old.Decision.InputDigest,
		EvaluatedAt:             old.Decision.EvaluatedAt,
		LastApprovedInstallPlan: old.Decision.LastApprovedInstallPlan,
	}
	if o.approved != "" {
		next.Decision.LastApprovedInstallPlan = o.approved
	}
	if decisionChanged(old.Decision, next.Decision) || next.Decision.EvaluatedAt == nil {
		next.Decision.EvaluatedAt = &o.now
		next.Decision.InputDigest = o.digest()
	}
	return next
}

// decisionChanged says whether the outcome changed. The input digest and evaluation time
// record the input that first produced the outcome: OLM rewrites timestamps in the objects
// Tollgate reads all the time, and those alone must not rewrite every gate.
func decisionChanged(old, next tollgatev1alpha1.Decision) bool {
	old.EvaluatedAt, next.EvaluatedAt = nil, nil
	old.InputDigest, next.InputDigest = "", ""
	return !equality.Semantic.DeepEqual(old, next)
}

func toConditions(in []engine.Condition, generation int64) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(in))
	for _, c := range in {
		reason := c.Reason
		if !reasonPattern.MatchString(reason) {
			reason = "Unspecified"
		}
		out = append(out, metav1.Condition{Type: c.Type, Status: c.Status, Reason: reason, Message: c.Message, ObservedGeneration: generation})
	}
	return out
}

// mergeConditions returns want, carrying over lastTransitionTime from old for conditions
// whose status did not change.
func mergeConditions(old, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(want))
	for _, c := range want {
		c.LastTransitionTime = now
		if prev := meta.FindStatusCondition(old, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}
