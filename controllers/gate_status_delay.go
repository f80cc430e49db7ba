package controllers

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// olmStepDelay is how long a gate's status may wait while OLM is between two steps it takes
// moments apart. An upgrade: the plan, the Subscription's status, then the plan's
// RequiresApproval. An operator's word: the operator writes its OperatorCondition's spec, then
// OLM copies it to status. Written at each step, the gate would cost a status write (and
// Events) per step; waiting, one write records where the steps lead. A change of whether the
// upgrade is allowed, of the policy revision, or an approval is never delayed.
const olmStepDelay = 2 * time.Second

// waited remembers since when each gate has waited, for waits bounded in all.
type waited struct{ since sync.Map } // types.NamespacedName → time.Time

// left is how much of limit is left for key, counted from the first time asked.
func (w *waited) left(key types.NamespacedName, limit time.Duration, now time.Time) time.Duration {
	since, _ := w.since.LoadOrStore(key, now)
	return limit - now.Sub(since.(time.Time))
}

// forget ends key's wait: the next one counts from zero.
func (w *waited) forget(key types.NamespacedName) { w.since.Delete(key) }

// hold is how much of limit is left for key while the reason to wait holds; zero, and the
// wait forgotten, once it does not or nothing is left.
func (w *waited) hold(key types.NamespacedName, holds bool, limit time.Duration, now time.Time) time.Duration {
	if holds {
		if left := w.left(key, limit, now); left > 0 {
			return left
		}
	}
	w.forget(key)
	return 0
}

// planning remembers since when each gate's status change has waited for OLM's next step.
type planning struct{ waited }

// wait says how much longer the status change of key may wait (zero: write it now): only while
// nothing urgent changed and OLM is between two steps (midway).
func (p *planning) wait(key types.NamespacedName, urgent, midway bool, now time.Time) time.Duration {
	return p.hold(key, !urgent && midway, olmStepDelay, now)
}

// deferral says how much longer the evaluation of gate on doc may wait for OLM's next step
// (zero: evaluate now). Evaluated midway, its status change would wait anyway (writeStatus)
// unless it is urgent; so the evaluation itself waits, on the same clock, when it can be
// nothing urgent: the gate has a decision by the policies in service and of its current spec,
// and no plan awaits approval. A plan awaiting approval may wait too while OLM copies the
// operator's conditions: until the copy, the policies hold it (OperatorConditionStale). A
// deferred evaluation approves nothing, so deferring can delay an approval, never make one.
func (r *GateReconciler) deferral(gate *tollgatev1alpha1.UpgradeGate, doc *input.Document) time.Duration {
	quiet := preparing(doc.PendingInstallPlans) && !awaiting(doc.PendingInstallPlans)
	if !r.decided(gate) || (!quiet && !copying(doc.OperatorCondition)) {
		return 0
	}
	return max(r.planning.left(client.ObjectKeyFromObject(gate), olmStepDelay, r.now()), 0)
}

// statusWork says how much longer the evaluation of gate on doc may wait for the approvals
// under way (approvalsFirst; zero: evaluate now): only when it can approve nothing (no plan
// awaits approval) and would at most update a decision made by the policies in service.
func (r *GateReconciler) statusWork(gate *tollgatev1alpha1.UpgradeGate, doc *input.Document) time.Duration {
	if awaiting(doc.PendingInstallPlans) || !r.decided(gate) {
		return 0
	}
	return r.approvals.wait(client.ObjectKeyFromObject(gate), time.Now())
}

// decided says whether gate's status holds a decision by the policies in service and of its
// current spec.
func (r *GateReconciler) decided(gate *tollgatev1alpha1.UpgradeGate) bool {
	revision, evaluates := r.Policies.Revision()
	return gate.Status.Decision.EvaluatedAt != nil && evaluates &&
		gate.Status.Decision.PolicyRevision == revision && gate.Status.ObservedGeneration == gate.Generation
}

// awaiting says whether one of the plans waits for an approval (awaitingApproval).
func awaiting(plans []v1alpha1.InstallPlan) bool {
	for i := range plans {
		if awaitingApproval(&plans[i]) {
			return true
		}
	}
	return false
}

// preparing says whether one of the plans is still being prepared by OLM (no phase, or Planning).
func preparing(plans []v1alpha1.InstallPlan) bool {
	for i := range plans {
		phase := v1alpha1.InstallPlanPhaseNone
		if plans[i].Status != nil {
			phase = plans[i].Status.Phase
		}
		if phase == v1alpha1.InstallPlanPhaseNone || phase == v1alpha1.InstallPlanPhasePlanning {
			return true
		}
	}
	return false
}

// copying says whether OLM has yet to copy the operator's spec.conditions of oc to its
// status: a spec condition without a status condition of its type observed at oc's generation.
func copying(oc *operatorsv2.OperatorCondition) bool {
	if oc == nil {
		return false
	}
	for _, want := range oc.Spec.Conditions {
		if !copied(oc.Status.Conditions, want.Type, oc.Generation) {
			return true
		}
	}
	return false
}

func copied(status []metav1.Condition, typ string, generation int64) bool {
	for _, c := range status {
		if c.Type == typ {
			return c.ObservedGeneration == generation
		}
	}
	return false
}
