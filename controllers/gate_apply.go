package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
)

// Event reasons.
const (
	EventUpgradeBlocked      = "UpgradeBlocked"
	EventUpgradeAllowed      = "UpgradeAllowed"
	EventInstallPlanApproved = "InstallPlanApproved"
	EventAutomaticApproval   = "AutomaticApproval"
	EventApprovalTakenOver   = "ApprovalTakenOver"
)

// approve approves the pending plans the policies allow, and returns the name of the plan
// it approved, if any. The patch carries the plan's resourceVersion: a plan that changed
// since it was gathered is re-evaluated on its update event, never approved blindly.
func (r *GateReconciler) approve(ctx context.Context, gate *tollgatev1alpha1.UpgradeGate, in *gather.Input, result *engine.Result) (string, error) {
	log := ctrl.LoggerFrom(ctx)
	approved := ""
	for i := range in.PendingInstallPlans {
		plan := &in.PendingInstallPlans[i]
		verdicts, err := Verdicts(ctx, r.Client, plan, r.DefaultMode, map[string]Verdict{
			in.Subscription.Status.CurrentCSV: verdictOf(in.Subscription, gate, result.Decision.Allowed, result.Decision.BlockedBy(), r.DefaultMode),
		}, r.judge)
		if err != nil {
			return "", err
		}
		ok, why := Approvable(plan, verdicts)
		if !ok {
			log.V(1).Info("not approving install plan", "installPlan", plan.Name, "why", why)
			continue
		}
		orig := plan.DeepCopy()
		plan.Spec.Approved = true
		if err := r.Patch(ctx, plan, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				log.Info("install plan changed since it was evaluated; re-evaluating", "installPlan", plan.Name)
				continue
			}
			return "", fmt.Errorf("approve install plan %s/%s: %w", plan.Namespace, plan.Name, err)
		}
		approvalsTotal.Inc()
		log.Info("approved install plan", "installPlan", plan.Name, "csvs", plan.Spec.ClusterServiceVersionNames)
		msg := fmt.Sprintf("Approved InstallPlan %s (%v): every operator it installs is allowed by policy revision %s.", plan.Name, plan.Spec.ClusterServiceVersionNames, result.Revision)
		r.Recorder.Event(plan, corev1.EventTypeNormal, EventInstallPlanApproved, msg)
		r.Recorder.Event(in.Subscription, corev1.EventTypeNormal, EventInstallPlanApproved, msg)
		approved = plan.Name
	}
	return approved, nil
}

// judge gathers and evaluates a peer Subscription from the cache, as Reconcile would.
func (r *GateReconciler) judge(ctx context.Context, key types.NamespacedName) (*engine.Result, error) {
	in, err := r.builder().Build(ctx, key)
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, fmt.Errorf("subscription %s is gone", key)
	}
	return r.Policies.Evaluate(ctx, in.Doc), nil
}

// verdictOf is one Subscription's verdict as its gate records it.
func verdictOf(sub *v1alpha1.Subscription, gate *tollgatev1alpha1.UpgradeGate, allowed bool, blockedBy string, def tollgatev1alpha1.Mode) Verdict {
	return Verdict{
		Subscription: sub.Namespace + "/" + sub.Name,
		Allowed:      allowed,
		BlockedBy:    blockedBy,
		Mode:         EffectiveMode(gate, def),
		Approval:     ApprovalOf(sub),
	}
}

// Judge evaluates one Subscription now, for the verdict on a CSV it wants.
type Judge func(ctx context.Context, sub types.NamespacedName) (*engine.Result, error)

// Verdicts returns the verdict for every CSV plan lists: known holds verdicts already
// computed (the Subscription being reconciled); the others belong to the Subscriptions in the
// plan's namespace that want those CSVs (status.currentCSV), and need a gate. With a judge,
// each of those is evaluated now: a peer gate's status may predate a change (its operator
// reported Upgradeable=False a moment ago), and approving the plan approves every CSV in it.
// A peer's InstallPlanIncludesBlockedOperator denial is left out there, since every CSV of
// the plan is being judged here anyway. Without a judge (offline, after the snapshot settled)
// the gates' recorded decisions are used.
func Verdicts(ctx context.Context, r client.Reader, plan *v1alpha1.InstallPlan, def tollgatev1alpha1.Mode, known map[string]Verdict, judge Judge) (map[string]Verdict, error) {
	verdicts := make(map[string]Verdict, len(plan.Spec.ClusterServiceVersionNames))
	var subs *v1alpha1.SubscriptionList
	for _, csv := range plan.Spec.ClusterServiceVersionNames {
		if v, ok := known[csv]; ok {
			verdicts[csv] = v
			continue
		}
		if subs == nil {
			subs = &v1alpha1.SubscriptionList{}
			if err := r.List(ctx, subs, client.InNamespace(plan.Namespace)); err != nil {
				return nil, fmt.Errorf("list subscriptions in %s: %w", plan.Namespace, err)
			}
		}
		for i := range subs.Items {
			sub := &subs.Items[i]
			if sub.Status.CurrentCSV != csv {
				continue
			}
			gate := &tollgatev1alpha1.UpgradeGate{}
			if err := r.Get(ctx, client.ObjectKeyFromObject(sub), gate); err != nil {
				if apierrors.IsNotFound(err) {
					break // no gate yet: no verdict, so the plan waits
				}
				return nil, fmt.Errorf("get gate %s/%s: %w", sub.Namespace, sub.Name, err)
			}
			switch {
			case judge != nil:
				res, err := judge(ctx, client.ObjectKeyFromObject(sub))
				if err != nil {
					return nil, fmt.Errorf("evaluate %s/%s, whose %s the plan installs: %w", sub.Namespace, sub.Name, csv, err)
				}
				blockedBy := standingExcept(res.Decision.Denials, tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator)
				verdicts[csv] = verdictOf(sub, gate, blockedBy == "", blockedBy, def)
			case gate.Status.Decision.EvaluatedAt != nil:
				verdicts[csv] = verdictOf(sub, gate, gate.Status.Decision.Allowed, gate.Status.Decision.BlockedBy, def)
			}
			break
		}
	}
	return verdicts, nil
}

// standingExcept is the code of the first standing denial other than code, or "".
func standingExcept(denials []tollgatev1alpha1.Denial, code string) string {
	for _, d := range denials {
		if !d.Overridden && d.Code != code {
			return d.Code
		}
	}
	return ""
}

// holdAutomatic deals with Subscriptions that approve automatically: OLM upgrades them
// without waiting for anyone, so Tollgate can only say so, or, with --take-over-approval,
// switch them to Manual. It returns the AutomaticApproval condition.
func (r *GateReconciler) holdAutomatic(ctx context.Context, sub *v1alpha1.Subscription) ([]metav1.Condition, error) {
	if ApprovalOf(sub) == v1alpha1.ApprovalManual {
		return []metav1.Condition{{Type: tollgatev1alpha1.ConditionAutomaticApproval, Status: metav1.ConditionFalse,
			Reason: "ManualApproval", Message: "InstallPlans wait for approval, so Tollgate can hold them."}}, nil
	}
	if r.TakeOverApproval {
		orig := sub.DeepCopy()
		sub.Spec.InstallPlanApproval = v1alpha1.ApprovalManual
		if err := r.Patch(ctx, sub, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return nil, fmt.Errorf("switch subscription %s/%s to manual approval: %w", sub.Namespace, sub.Name, client.IgnoreNotFound(err))
		}
		r.Recorder.Event(sub, corev1.EventTypeNormal, EventApprovalTakenOver,
			"Switched installPlanApproval from Automatic to Manual (--take-over-approval): Tollgate now approves this operator's InstallPlans when policy allows.")
		return []metav1.Condition{{Type: tollgatev1alpha1.ConditionAutomaticApproval, Status: metav1.ConditionFalse,
			Reason: "ApprovalTakenOver", Message: "Tollgate switched installPlanApproval to Manual and approves InstallPlans when policy allows."}}, nil
	}
	msg := fmt.Sprintf("installPlanApproval is Automatic, so OLM approves this operator's InstallPlans itself and Tollgate cannot hold them; "+
		"decisions are reported only. To let Tollgate gate upgrades: kubectl patch subscription -n %s %s --type merge -p '{\"spec\":{\"installPlanApproval\":\"Manual\"}}' "+
		"(or run the manager with --take-over-approval).", sub.Namespace, sub.Name)
	return []metav1.Condition{{Type: tollgatev1alpha1.ConditionAutomaticApproval, Status: metav1.ConditionTrue, Reason: "AutomaticApproval", Message: msg}}, nil
}

// reportDecision emits an Event on the Subscription and its pending plans when the
// decision changed, saying what blocks the upgrade and where to look.
func (r *GateReconciler) reportDecision(old, next tollgatev1alpha1.Decision, in *gather.Input) {
	if old.Allowed == next.Allowed && old.BlockedBy == next.BlockedBy {
		return // only details changed; the gate's status has them
	}
	sub := in.Subscription
	eventType, reason := corev1.EventTypeNormal, EventUpgradeAllowed
	msg := "Upgrade allowed by policy: no denial stands."
	if ApprovalOf(sub) == v1alpha1.ApprovalAutomatic {
		msg += " (installPlanApproval is Automatic: OLM approves on its own.)"
	}
	if !next.Allowed {
		eventType, reason = corev1.EventTypeWarning, EventUpgradeBlocked
		msg = fmt.Sprintf("Upgrade held: %s. Run `kubectl tollgate explain -n %s %s` for what would lift it.", firstStanding(next), sub.Namespace, sub.Name)
	}
	objs := []runtime.Object{sub}
	for i := range in.PendingInstallPlans {
		objs = append(objs, &in.PendingInstallPlans[i])
	}
	for _, obj := range objs {
		r.Recorder.Event(obj, eventType, reason, msg)
	}
}

func firstStanding(d tollgatev1alpha1.Decision) string {
	for _, den := range d.Denials {
		if !den.Overridden {
			return den.Code + ": " + den.Message
		}
	}
	return "no decision yet"
}
