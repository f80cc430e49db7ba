package controllers

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
)

// olmStepDelay is how long a gate's status may wait while OLM is between two steps it takes
// moments apart. An upgrade: the plan, the Subscription's status, then the plan's
// RequiresApproval. An operator's word: the operator writes its OperatorCondition's spec, then
// OLM copies it to status. Written at each step, the gate would cost a status write (and
// Events) per step; waiting, one write records where the steps lead. A change of whether the
// upgrade is allowed, of the policy revision, or an approval is never delayed.
const olmStepDelay = 2 * time.Second

// planning remembers since when each gate's status change has waited for OLM's next step.
type planning struct{ since sync.Map } // types.NamespacedName → time.Time

// wait says how much longer the status change of key may wait (zero: write it now): only while
// nothing urgent changed and OLM is between two steps (midway).
func (p *planning) wait(key types.NamespacedName, urgent, midway bool, now time.Time) time.Duration {
	if urgent || !midway {
		p.since.Delete(key)
		return 0
	}
	since, _ := p.since.LoadOrStore(key, now)
	left := olmStepDelay - now.Sub(since.(time.Time))
	if left <= 0 {
		p.since.Delete(key)
		return 0
	}
	return left
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
