package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
)

// Event reasons.
const (
	EventUpgradeBlocked      = "UpgradeBlocked"
	EventUpgradeAllowed      = "UpgradeAllowed"
	EventAutomaticApproval   = "AutomaticApproval"
	EventApprovalTakenOver   = "ApprovalTakenOver"
	EventPolicyResultInvalid = "PolicyResultInvalid"
)

// approve approves the pending plans whose verdict says so, each in one patch that also
// carries the approval record of the gate's decision d, and returns the name of the last
// plan it approved, if any, also when a later plan failed. The patch carries the plan's
// resourceVersion: a plan that changed since it was gathered is re-evaluated on its update
// event, never approved blindly. While the decision log is closing (the manager stops), it
// approves nothing: an approval the log might miss is left to the next manager.
func (r *GateReconciler) approve(ctx context.Context, dec *approval.Decision, d tollgatev1alpha1.Decision) (string, error) {
	log := ctrl.LoggerFrom(ctx)
	record := tollgatev1alpha1.RecordOf(dec.Subscription.Name, d, metav1.NewTime(r.now().Truncate(time.Second))).String()
	approved := ""
	for i := range dec.PendingInstallPlans {
		plan, verdict := &dec.PendingInstallPlans[i], dec.Plans[i]
		if !verdict.Approvable {
			log.V(1).Info("not approving install plan", "installPlan", plan.Name, "why", verdict.WhyNot())
			continue
		}
		ok, err := r.approvePlan(ctx, dec, plan, record)
		switch {
		case errors.Is(err, errLogClosing):
			log.Info("not approving install plan: the manager stops and the decision log is closing", "installPlan", plan.Name)
			return approved, nil
		case err != nil:
			return approved, err
		case ok:
			approved = plan.Name
		}
	}
	return approved, nil
}

// errLogClosing says the decision log no longer takes approvals (decisionlog.Logger.Hold).
var errLogClosing = errors.New("the decision log is closing")

// approvePlan approves plan in one patch carrying record and logs the approval, holding the
// decision log open from before the patch until the approval is logged, so that no approval
// is made that the log misses. It says whether plan was approved: a plan that changed or went
// away since it was gathered is not, and that is no error.
func (r *GateReconciler) approvePlan(ctx context.Context, dec *approval.Decision, plan *v1alpha1.InstallPlan, record string) (bool, error) {
	release, ok := r.DecisionLog.Hold()
	if !ok {
		return false, errLogClosing
	}
	defer release()
	log := ctrl.LoggerFrom(ctx)
	orig := plan.DeepCopy()
	plan.Spec.Approved = true
	metav1.SetMetaDataAnnotation(&plan.ObjectMeta, tollgatev1alpha1.ApprovalRecordAnnotation, record)
	if err := r.Patch(ctx, plan, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			log.Info("install plan changed since it was evaluated; re-evaluating", "installPlan", plan.Name)
			return false, nil
		}
		return false, fmt.Errorf("approve install plan %s/%s: %w", plan.Namespace, plan.Name, err)
	}
	// Recorded on the plan and in the gate's status, the log and the metric; no Event:
	// an approval costs the approval and one status write.
	r.approved.record(plan, client.ObjectKeyFromObject(dec.Subscription))
	approvalsTotal.Inc()
	r.DecisionLog.Approval(dec, plan)
	log.Info("approved install plan", "installPlan", plan.Name, "csvs", plan.Spec.ClusterServiceVersionNames, "policyRevision", dec.Result.Revision)
	return true, nil
}

// holdAutomatic deals with Subscriptions that approve automatically: OLM upgrades them
// without waiting for anyone, so Tollgate can only say so, or, with --take-over-approval,
// switch them to Manual. It returns the AutomaticApproval condition.
func (r *GateReconciler) holdAutomatic(ctx context.Context, sub *v1alpha1.Subscription) ([]metav1.Condition, error) {
	mode := approval.ApprovalOf(sub)
	if mode == v1alpha1.ApprovalManual {
		return []metav1.Condition{gatestatus.AutomaticApproval(sub, mode, false)}, nil
	}
	takeOver, err := r.takesOver(ctx, sub)
	if !takeOver || err != nil {
		return []metav1.Condition{gatestatus.AutomaticApproval(sub, mode, false)}, err
	}
	orig := sub.DeepCopy()
	if sub.Spec == nil {
		sub.Spec = &v1alpha1.SubscriptionSpec{}
	}
	sub.Spec.InstallPlanApproval = v1alpha1.ApprovalManual
	if err := r.Patch(ctx, sub, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsForbidden(err) && !r.TakeOverApproval {
			return []metav1.Condition{dependencyNotTakenOver(sub, mode)}, nil
		}
		// A Subscription deleted meanwhile is no error: its gate goes with it.
		return nil, client.IgnoreNotFound(fmt.Errorf("switch subscription %s/%s to manual approval: %w", sub.Namespace, sub.Name, err))
	}
	why := "--take-over-approval"
	if !r.TakeOverApproval {
		why = "OLM created it for a dependency of InstallPlan " + sub.Annotations[GeneratedByAnnotation] + ", which Tollgate approved; --leave-dependencies-automatic keeps OLM's default"
		dependencyTakeOversTotal.Inc()
	}
	r.Recorder.Event(sub, corev1.EventTypeNormal, EventApprovalTakenOver,
		"Switched installPlanApproval from Automatic to Manual ("+why+"): Tollgate now approves this operator's InstallPlans when policy allows.")
	return []metav1.Condition{gatestatus.AutomaticApproval(sub, mode, true)}, nil
}

// reportDecision emits an Event when the status went from old to next and that is news
// (news): one, on the Subscription sub, where a person looks when an upgrade does not happen
// (kubectl describe subscription): a hold, saying what blocks the upgrade and where to look, or
// a release. One Event per change of outcome, and no more: the gate's status holds the
// decision, the plan its approval record, the decision log the history, and every Event is a
// write that the approvals behind it wait for.
func (r *GateReconciler) reportDecision(old, next tollgatev1alpha1.UpgradeGateStatus, sub *v1alpha1.Subscription) {
	if !news(old, next) {
		return
	}
	if next.Decision.Allowed {
		msg := "Upgrade allowed by policy: no denial stands."
		if approval.ApprovalOf(sub) == v1alpha1.ApprovalAutomatic {
			msg += " (installPlanApproval is Automatic: OLM approves on its own.)"
		}
		r.Recorder.Event(sub, corev1.EventTypeNormal, EventUpgradeAllowed, msg)
		return
	}
	msg := fmt.Sprintf("Upgrade held: %s. Run `kubectl tollgate explain -n %s %s` for what would lift it.", firstStanding(next.Decision), sub.Namespace, sub.Name)
	r.Recorder.Event(sub, corev1.EventTypeWarning, EventUpgradeBlocked, msg)
}

// news says whether a status change is news to report: an upgrade waits (a CSV wanted that is
// not installed) and either it has just begun waiting and is held, or the outcome on it
// changed (allowed, or the code that holds it). A decision changing while no upgrade waits
// (a catalog's health flip at every gate) and a first decision that holds nothing are not.
func news(old, next tollgatev1alpha1.UpgradeGateStatus) bool {
	was, now := old.Decision, next.Decision
	switch {
	case !waiting(next):
		return false
	case !waiting(old) || was.EvaluatedAt == nil:
		return !now.Allowed
	}
	return was.Allowed != now.Allowed || was.BlockedBy != now.BlockedBy
}

// waiting says whether the status shows an upgrade (or a first install) waiting.
func waiting(s tollgatev1alpha1.UpgradeGateStatus) bool {
	return s.CurrentCSV != "" && s.CurrentCSV != s.InstalledCSV
}

func firstStanding(d tollgatev1alpha1.Decision) string {
	for _, den := range d.Denials {
		if !den.Overridden {
			return den.Code + ": " + den.Message
		}
	}
	return "no decision yet"
}
