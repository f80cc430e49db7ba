package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// Package gamma requires package delta (olm.package.required): OLM installs both through one
// plan, which also creates delta's Subscription (Automatic: Tollgate, which approved the plan,
// switches it to Manual without --take-over-approval), and upgrades both through one plan when
// both publish a new version. That plan is held while either operator's decision holds, and approved once both
// allow.
func TestBundledPlanHeldWhileEitherOperatorHolds(t *testing.T) {
	gamma1 := release{pkg: "gamma", version: "1.0.0", requires: []string{"delta"}}
	delta1 := release{pkg: "delta", version: "1.0.0"}
	gamma2 := release{pkg: "gamma", version: "2.0.0", replaces: csvName("gamma", "1.0.0"), requires: []string{"delta"}}
	delta2 := release{pkg: "delta", version: "2.0.0", replaces: csvName("delta", "1.0.0")}
	w := newWorld(t, gamma1, delta1)
	w.stopManager()
	ns := w.namespace("bundled-")

	w.subscribe(ns, "gamma", "gamma", v1alpha1.ApprovalManual)
	first := w.planOf(ns, "gamma", csvName("gamma", "1.0.0"), csvName("delta", "1.0.0"))
	w.planPhase(ns, first.Name, v1alpha1.InstallPlanPhaseRequiresApproval)
	w.fixture("bundled-first-install", "gamma requires delta; OLM's one plan installs both and creates delta's Subscription")
	w.startManager(defaultOptions())
	w.planPhase(ns, first.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, csvName("gamma", "1.0.0"), v1alpha1.CSVPhaseSucceeded)
	w.csvPhase(ns, csvName("delta", "1.0.0"), v1alpha1.CSVPhaseSucceeded)
	delta := w.subscriptionFor(ns, "delta")
	w.eventually("delta's Subscription switched to Manual", func() bool {
		return w.subscription(ns, delta).Spec.InstallPlanApproval == v1alpha1.ApprovalManual
	}, func() string { return "" })

	w.report(ns, csvName("delta", "1.0.0"), "Upgradeable", metav1.ConditionFalse, "Rebalancing", "rebalancing partitions")
	w.copiedToStatus(ns, csvName("delta", "1.0.0"), "Upgradeable", metav1.ConditionFalse)
	w.opm.publish([]release{gamma1, delta1, gamma2, delta2})
	plan := w.planOf(ns, "gamma", csvName("gamma", "2.0.0"), csvName("delta", "2.0.0"))
	w.gate(ns, delta, "held: delta is not upgradeable", denies("OperatorNotUpgradeable"))
	w.gate(ns, "gamma", "held: its plan carries delta", denies("InstallPlanIncludesBlockedOperator"))
	w.stillUnapproved(ns, plan.Name)
	w.fixture("bundled-upgrade-held", "delta 1.0.0 says Upgradeable=False; OLM's one plan upgrades gamma and delta")

	w.report(ns, csvName("delta", "1.0.0"), "Upgradeable", metav1.ConditionTrue, "Rebalanced", "partitions rebalanced")
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, csvName("gamma", "2.0.0"), v1alpha1.CSVPhaseSucceeded)
	w.csvPhase(ns, csvName("delta", "2.0.0"), v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "gamma", csvName("gamma", "2.0.0"))
	assert.Equal(t, csvName("delta", "2.0.0"), w.installed(ns, delta, csvName("delta", "2.0.0")).Status.InstalledCSV)
}

// Package delta's first release replaces epsilon.v1.0.0, the CSV of another package installed
// in the namespace (a renamed package), and gamma requires delta. OLM's plan for gamma installs
// delta as a new dependency whose CSV replaces epsilon's, whatever its package; so the plan is
// held while epsilon's operator says Upgradeable=False, and once it says True, approved: OLM
// replaces epsilon's CSV with delta's, and Tollgate switches delta's Subscription to Manual.
func TestDependencyThatReplacesAHeldOperatorHoldsThePlan(t *testing.T) {
	epsilon1 := release{pkg: "epsilon", version: "1.0.0"}
	gamma1 := release{pkg: "gamma", version: "1.0.0", requires: []string{"delta"}}
	delta1 := release{pkg: "delta", version: "1.0.0", replaces: csvName("epsilon", "1.0.0")}
	w := newWorld(t, epsilon1)
	ns := w.namespace("renamed-")
	w.subscribe(ns, "epsilon", "epsilon", v1alpha1.ApprovalManual)
	w.planPhase(ns, w.pendingPlan(ns, "epsilon", csvName("epsilon", "1.0.0")).Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, csvName("epsilon", "1.0.0"), v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "epsilon", csvName("epsilon", "1.0.0"))
	w.report(ns, csvName("epsilon", "1.0.0"), "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating to delta")
	w.copiedToStatus(ns, csvName("epsilon", "1.0.0"), "Upgradeable", metav1.ConditionFalse)

	w.opm.publish([]release{epsilon1, gamma1, delta1})
	w.subscribe(ns, "gamma", "gamma", v1alpha1.ApprovalManual)
	plan := w.planOf(ns, "gamma", csvName("gamma", "1.0.0"), csvName("delta", "1.0.0"))
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseRequiresApproval)
	w.fixture("dependency-replaces-held", "delta, a new dependency of gamma, replaces epsilon.v1.0.0, which says Upgradeable=False")
	w.gate(ns, "gamma", "held: its plan's dependency replaces epsilon, which is not upgradeable", denies("InstallPlanIncludesBlockedOperator"))
	w.stillUnapproved(ns, plan.Name)

	w.report(ns, csvName("epsilon", "1.0.0"), "Upgradeable", metav1.ConditionTrue, "Migrated", "ready for delta")
	w.copiedToStatus(ns, csvName("epsilon", "1.0.0"), "Upgradeable", metav1.ConditionTrue)
	w.gate(ns, "gamma", "allows the plan once epsilon may be replaced", func(g *tollgatev1alpha1.UpgradeGate) bool { return g.Status.Decision.Allowed })
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, csvName("delta", "1.0.0"), v1alpha1.CSVPhaseSucceeded)
	w.gone(ns, csvName("epsilon", "1.0.0"), &v1alpha1.ClusterServiceVersion{})
	delta := w.subscriptionFor(ns, "delta")
	w.eventually("delta's Subscription switched to Manual", func() bool {
		return w.subscription(ns, delta).Spec.InstallPlanApproval == v1alpha1.ApprovalManual
	}, func() string { return "" })
}
