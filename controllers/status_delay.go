package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// planningDelay is how long a gate's status may wait while OLM prepares an InstallPlan. OLM
// moves an upgrade in steps moments apart: the plan, the Subscription's status, then the
// plan's RequiresApproval. Written at each step, the gate would cost a status write per step;
// waiting while a plan is being prepared, one write records the decision and the approval
// together. A new decision or an approval is never delayed.
const planningDelay = 2 * time.Second

// planning remembers since when each gate's status change has waited for a plan in
// preparation.
type planning struct{ since sync.Map } // types.NamespacedName → time.Time

// wait says how much longer the status change of key may wait (zero: write it now): only while
// nothing urgent changed and one of the pending plans is still being prepared.
func (p *planning) wait(key types.NamespacedName, urgent bool, pending []v1alpha1.InstallPlan, now time.Time) time.Duration {
	if urgent || !preparing(pending) {
		p.since.Delete(key)
		return 0
	}
	since, _ := p.since.LoadOrStore(key, now)
	left := planningDelay - now.Sub(since.(time.Time))
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
