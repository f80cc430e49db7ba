package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// Tollgate is stopped while OLM creates plans: nothing is approved while it is down. Started
// again, it decides each plan once: one approval, and OLM installs.
func TestPlansCreatedWhileTollgateIsDownWaitForIt(t *testing.T) {
	w := newWorld(t, release{pkg: "alpha", version: "1.0.0"}, release{pkg: "beta", version: "1.0.0"})
	w.stopManager()
	ns := w.namespace("restart-")
	w.subscribe(ns, "alpha", "alpha", v1alpha1.ApprovalManual)
	w.subscribe(ns, "beta", "beta", v1alpha1.ApprovalManual)
	var plans []*v1alpha1.InstallPlan
	for _, pkg := range []string{"alpha", "beta"} {
		plan := w.pendingPlan(ns, pkg, csvName(pkg, "1.0.0"))
		w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseRequiresApproval)
		plans = append(plans, plan)
	}
	for _, plan := range plans {
		w.stillUnapproved(ns, plan.Name)
	}

	approvals := w.watchApprovals(ns)
	w.startManager(defaultOptions())
	for _, pkg := range []string{"alpha", "beta"} {
		w.csvPhase(ns, csvName(pkg, "1.0.0"), v1alpha1.CSVPhaseSucceeded)
		w.installed(ns, pkg, csvName(pkg, "1.0.0"))
	}
	for _, plan := range plans {
		records := approvals()[plan.Name]
		require.NotEmpty(t, records, "plan %s approved", plan.Name)
		assert.Len(t, records, 1, "plan %s approved once: %v", plan.Name, records)
	}
}
