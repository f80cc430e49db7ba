package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// An admin's spec.overrides of Upgradeable=True in the OperatorCondition lets the upgrade
// through, over the operator's own Upgradeable=False: Tollgate approves, and OLM, which reads
// the override first too, completes the upgrade.
func TestOverrideOfUpgradeableIsHonouredByBoth(t *testing.T) {
	v1 := release{pkg: "beta", version: "1.0.0"}
	v2 := release{pkg: "beta", version: "2.0.0", replaces: csvName("beta", "1.0.0")}
	old, next := csvName("beta", "1.0.0"), csvName("beta", "2.0.0")
	w := newWorld(t, v1)
	ns := w.namespace("override-")
	w.install(ns, "beta", "beta", old)
	w.report(ns, old, "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating the storage schema")
	w.copiedToStatus(ns, old, "Upgradeable", metav1.ConditionFalse)
	w.override(ns, old, "Upgradeable", metav1.ConditionTrue, "AdminOverride", "the migration is known to be safe")

	w.opm.publish([]release{v1, v2})
	plan := w.pendingPlan(ns, "beta", next)
	gate := w.gate(ns, "beta", "approved over the operator's hold", approved(plan.Name))
	for _, d := range gate.Status.Decision.Denials {
		assert.True(t, d.Overridden, "denial %s stands beside the override", d.Code)
	}
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, next, v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "beta", next)
}
