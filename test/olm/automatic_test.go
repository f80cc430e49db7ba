package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// An Automatic Subscription: OLM approves its own plans, and Tollgate reports it and touches
// nothing. Restarted with --take-over-approval, Tollgate switches it to Manual, and OLM's next
// plan waits for Tollgate, which holds it while the operator is not upgradeable.
func TestAutomaticSubscriptionReportedThenTakenOver(t *testing.T) {
	v1 := release{pkg: "beta", version: "1.0.0"}
	v2 := release{pkg: "beta", version: "2.0.0", replaces: csvName("beta", "1.0.0")}
	old := csvName("beta", "1.0.0")
	w := newWorld(t, v1)
	ns := w.namespace("automatic-")
	w.subscribe(ns, "beta", "beta", v1alpha1.ApprovalAutomatic)
	first := w.pendingPlan(ns, "beta", old)
	assert.Equal(t, v1alpha1.ApprovalAutomatic, first.Spec.Approval)
	w.csvPhase(ns, old, v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "beta", old)
	gate := w.gate(ns, "beta", "reports automatic approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return conditionStatus(g.Status.Conditions, "AutomaticApproval") == metav1.ConditionTrue
	})
	assert.Empty(t, gate.Status.Decision.LastApprovedInstallPlan, "Tollgate approved nothing")
	assert.Equal(t, v1alpha1.ApprovalAutomatic, w.subscription(ns, "beta").Spec.InstallPlanApproval, "Tollgate changed nothing")

	w.stopManager()
	opts := defaultOptions()
	opts.TakeOverApproval = true
	w.startManager(opts)
	w.eventually("Subscription switched to Manual", func() bool {
		return w.subscription(ns, "beta").Spec.InstallPlanApproval == v1alpha1.ApprovalManual
	}, func() string { return "" })
	w.report(ns, old, "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating the storage schema")
	w.copiedToStatus(ns, old, "Upgradeable", metav1.ConditionFalse)
	w.opm.publish([]release{v1, v2})
	plan := w.pendingPlan(ns, "beta", csvName("beta", "2.0.0"))
	require.Equal(t, v1alpha1.ApprovalManual, plan.Spec.Approval, "OLM's next plan waits for approval")
	w.gate(ns, "beta", "held: not upgradeable", denies("OperatorNotUpgradeable"))
	w.stillUnapproved(ns, plan.Name)
}

func conditionStatus(conds []metav1.Condition, typ string) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}
