package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// A first install through a Manual Subscription: OLM's plan waits for approval, Tollgate
// approves it (nothing is installed that could object), and OLM installs the CSV.
func TestFirstInstallIsApprovedAndSucceeds(t *testing.T) {
	w := newWorld(t, release{pkg: "alpha", version: "1.0.0"})
	ns := w.namespace("install-")
	w.subscribe(ns, "alpha", "alpha", v1alpha1.ApprovalManual)

	plan := w.pendingPlan(ns, "alpha", csvName("alpha", "1.0.0"))
	assert.Equal(t, v1alpha1.ApprovalManual, plan.Spec.Approval)

	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, csvName("alpha", "1.0.0"), v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "alpha", csvName("alpha", "1.0.0"))
	gate := w.gate(ns, "alpha", "approved the plan", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan != ""
	})
	assert.Equal(t, plan.Name, gate.Status.Decision.LastApprovedInstallPlan)
}
