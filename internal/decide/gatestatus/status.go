// Package gatestatus turns one evaluation into an UpgradeGate: the gate Tollgate creates for a
// Subscription, and the status it records. The manager and `tollgate eval` both build the
// status here, so they record the same thing.
package gatestatus

import (
	"fmt"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
)

// reasonPattern is what metav1.Condition accepts as a reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// InvalidReason replaces a condition reason the API server would refuse.
const InvalidReason = "InvalidReason"

// New is the gate Tollgate creates for sub: same namespace and name, owned by sub so that it
// goes away with it.
func New(sub *v1alpha1.Subscription) *tollgatev1alpha1.UpgradeGate {
	return &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{
		Namespace: sub.Namespace,
		Name:      sub.Name,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         v1alpha1.GroupVersion.String(),
			Kind:               "Subscription",
			Name:               sub.Name,
			UID:                sub.UID,
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		}},
	}}
}

// Observation is everything one evaluation contributes to an UpgradeGate's status.
type Observation struct {
	Generation   int64
	Subscription *v1alpha1.Subscription
	Result       *engine.Result
	// Digest identifies the input; it is called only when the outcome changed.
	Digest func() string
	// Extra are conditions Tollgate originates itself (AutomaticApproval).
	Extra []metav1.Condition
	// Approved names the plan this reconcile approves, or one whose approval record names
	// this gate: the last approved.
	Approved string
	// Unapproved are the pending plans not approved: when the recorded last approval is one
	// of them, that approval never happened (it failed after a status written first had
	// recorded it) and the record is withdrawn.
	Unapproved []string
	// Bypasses are the plans approved behind the gate that this evaluation found and its
	// status does not record yet (bypass.InstallPlans), without their decision: each is
	// recorded with the gate's decision at that moment (the one its status held; on a first
	// decision, this one).
	Bypasses []tollgatev1alpha1.Bypass
	Now      metav1.Time
}

// Next computes the gate's status from an observation. Condition transition times move only
// when a status changes; evaluatedAt and inputDigest only when the decision changed (or on
// the first decision), so a reconcile on unchanged state produces an equal status and no
// write. Problems lists what the policies returned that the status cannot hold as is (a
// condition reason the API server would refuse); the caller reports them.
func Next(old tollgatev1alpha1.UpgradeGateStatus, o Observation) (next tollgatev1alpha1.UpgradeGateStatus, problems []string) {
	res, sub := o.Result, o.Subscription
	next = tollgatev1alpha1.UpgradeGateStatus{
		ObservedGeneration: o.Generation,
		InstalledCSV:       sub.Status.InstalledCSV,
		CurrentCSV:         sub.Status.CurrentCSV,
		State:              res.State,
		UpToDate:           res.UpToDate,
		InstallPlanRef:     sub.Status.InstallPlanRef,
		CatalogStatus:      res.CatalogStatus,
	}
	if sub.Spec != nil {
		next.Package = sub.Spec.Package
	}
	conditions, p1 := toConditions(res.Conditions, o.Generation)
	health, p2 := toConditions(res.Health, o.Generation)
	next.Conditions = mergeConditions(old.Conditions, append(conditions, o.Extra...), o.Now)
	next.Health = mergeConditions(old.Health, health, o.Now)
	next.Decision = nextDecision(old.Decision, o)
	next.Bypasses = recordBypasses(old.Bypasses, o.Bypasses, func(tollgatev1alpha1.Bypass) tollgatev1alpha1.BypassDecision {
		return bypass.DecisionOf(decisionThen(old.Decision, next.Decision))
	})
	return next, append(p1, p2...)
}

// recordBypasses records found in list (bypass.Add), each with the decision then says of it.
func recordBypasses(list, found []tollgatev1alpha1.Bypass, then func(tollgatev1alpha1.Bypass) tollgatev1alpha1.BypassDecision) []tollgatev1alpha1.Bypass {
	if len(found) == 0 {
		return list
	}
	decided := make([]tollgatev1alpha1.Bypass, len(found))
	for i, b := range found {
		b.Decision = then(b)
		decided[i] = b
	}
	return bypass.Add(list, decided...)
}

// decisionThen is the gate's decision when a bypass was seen: the one its status held, or,
// when it held none yet, the one this evaluation makes.
func decisionThen(old, next tollgatev1alpha1.Decision) tollgatev1alpha1.Decision {
	if old.EvaluatedAt == nil && old.PolicyRevision == "" {
		return next
	}
	return old
}

func nextDecision(old tollgatev1alpha1.Decision, o Observation) tollgatev1alpha1.Decision {
	next := decisionOf(old, o.Result)
	switch {
	case o.Approved != "":
		next.LastApprovedInstallPlan = o.Approved
	case slices.Contains(o.Unapproved, next.LastApprovedInstallPlan):
		next.LastApprovedInstallPlan = ""
	}
	return stamped(old, next, o.Digest, o.Now)
}

// decisionOf is the decision res records, with old's record of when and on what it was first
// reached.
func decisionOf(old tollgatev1alpha1.Decision, res *engine.Result) tollgatev1alpha1.Decision {
	return tollgatev1alpha1.Decision{
		Allowed:                 res.Decision.Allowed,
		BlockedBy:               res.Decision.BlockedBy(),
		Denials:                 Denials(res.Decision),
		PolicyRevision:          res.Revision,
		InputDigest:             old.InputDigest,
		EvaluatedAt:             old.EvaluatedAt,
		LastApprovedInstallPlan: old.LastApprovedInstallPlan,
	}
}

// stamped is next, its evaluation time and input digest moved to now when the outcome changed
// (or was never stamped).
func stamped(old, next tollgatev1alpha1.Decision, digest func() string, now metav1.Time) tollgatev1alpha1.Decision {
	if DecisionChanged(old, next) || next.EvaluatedAt == nil {
		next.EvaluatedAt = &now
		next.InputDigest = digest()
	}
	return next
}

// Denials are the denials as the gate records them: without facts and remedies, their texts
// truncated to MaxDenialText.
func Denials(d engine.Decision) []tollgatev1alpha1.Denial {
	if len(d.Denials) == 0 {
		return nil
	}
	out := make([]tollgatev1alpha1.Denial, 0, len(d.Denials))
	for _, den := range d.Denials {
		rec := den.Denial
		rec.Message = truncate(rec.Message, MaxDenialText)
		rec.OverrideReason = truncate(rec.OverrideReason, MaxDenialText)
		rec.Source = truncate(rec.Source, MaxDenialText)
		out = append(out, rec)
	}
	return out
}

// DecisionChanged says whether the outcome (allowed, denials, policy revision) changed. The
// input digest and evaluation time record the input that first produced the outcome: OLM
// rewrites timestamps in the objects Tollgate reads all the time, and those alone must not
// rewrite every gate. The approval record is no outcome: approving a plan the decision
// allowed is not a new decision.
func DecisionChanged(old, next tollgatev1alpha1.Decision) bool {
	old.EvaluatedAt, next.EvaluatedAt = nil, nil
	old.InputDigest, next.InputDigest = "", ""
	old.LastApprovedInstallPlan, next.LastApprovedInstallPlan = "", ""
	return !equality.Semantic.DeepEqual(old, next)
}

// toConditions converts the policies' conditions. A reason the API server would refuse is
// replaced by InvalidReason, and reported; mergeConditions truncates the messages.
func toConditions(in []engine.Condition, generation int64) ([]metav1.Condition, []string) {
	out := make([]metav1.Condition, 0, len(in))
	var problems []string
	for _, c := range in {
		reason, msg := c.Reason, c.Message
		if len(reason) > MaxConditionReason || !reasonPattern.MatchString(reason) {
			shown := truncate(reason, 256)
			problems = append(problems, fmt.Sprintf("condition %s: the policies returned the reason %q, which is not a valid condition reason (a letter, then letters, digits, '_', ',' or ':', at most %d bytes); recorded as %s", c.Type, shown, MaxConditionReason, InvalidReason))
			reason, msg = InvalidReason, fmt.Sprintf("(the policies returned the invalid reason %q) %s", shown, msg)
		}
		out = append(out, metav1.Condition{Type: c.Type, Status: c.Status, Reason: reason, Message: msg, ObservedGeneration: generation})
	}
	return out, problems
}

// mergeConditions returns want, its messages truncated to MaxConditionMessage, carrying over
// lastTransitionTime from old for conditions whose status did not change.
func mergeConditions(old, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(want))
	for _, c := range want {
		c.Message = truncate(c.Message, MaxConditionMessage)
		c.LastTransitionTime = now
		if prev := meta.FindStatusCondition(old, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}
