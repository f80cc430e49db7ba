package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// install subscribes ns/name to pkg (Manual), lets Tollgate approve OLM's first plan and
// waits until OLM has installed csv.
func (w *world) install(ns, name, pkg, csv string) {
	w.t.Helper()
	w.subscribe(ns, name, pkg, v1alpha1.ApprovalManual)
	plan := w.pendingPlan(ns, name, csv)
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, csv, v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, name, csv)
}

// An operator that says it is not upgradeable holds OLM's upgrade plan in Tollgate; once it
// lifts the hold, Tollgate approves and OLM completes the upgrade (its own after-approval
// check of Upgradeable leaves no CSV pending).
func TestUpgradeHeldWhileOperatorIsNotUpgradeable(t *testing.T) {
	v1 := release{pkg: "beta", version: "1.0.0"}
	v2 := release{pkg: "beta", version: "2.0.0", replaces: csvName("beta", "1.0.0")}
	old, next := csvName("beta", "1.0.0"), csvName("beta", "2.0.0")
	w := newWorld(t, v1)
	ns := w.namespace("upgrade-")
	w.install(ns, "beta", "beta", old)

	w.report(ns, old, "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating the storage schema")
	w.copiedToStatus(ns, old, "Upgradeable", metav1.ConditionFalse)
	w.opm.publish([]release{v1, v2})

	plan := w.pendingPlan(ns, "beta", next)
	assert.Equal(t, v1alpha1.InstallPlanPhaseRequiresApproval, plan.Status.Phase)
	w.gate(ns, "beta", "held: not upgradeable", denies("OperatorNotUpgradeable"))
	w.stillUnapproved(ns, plan.Name)
	w.fixture("upgrade-held", "beta 1.0.0 says Upgradeable=False; OLM's plan to 2.0.0 waits")
	assert.False(t, w.get(ns, next, &v1alpha1.ClusterServiceVersion{}), "OLM creates no CSV for an unapproved plan")
	why := w.tollgate("explain", "-n", ns, "beta")
	assert.Contains(t, why, "OperatorNotUpgradeable")
	assert.Contains(t, why, "migrating the storage schema")

	w.report(ns, old, "Upgradeable", metav1.ConditionTrue, "Migrated", "the storage schema is migrated")
	w.gate(ns, "beta", "approved the upgrade", approved(plan.Name))
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, next, v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "beta", next)
	w.gone(ns, old, &v1alpha1.ClusterServiceVersion{})
}
