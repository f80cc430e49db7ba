package olm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// heldUpgrade installs beta 1.0.0 in a namespace of its own, has the operator say it is not
// upgradeable, publishes 2.0.0 and waits until OLM's upgrade plan waits, held by Tollgate.
// It returns the namespace and the plan.
func (w *world) heldUpgrade(prefix string) (string, *v1alpha1.InstallPlan) {
	w.t.Helper()
	v1 := release{pkg: "beta", version: "1.0.0"}
	v2 := release{pkg: "beta", version: "2.0.0", replaces: csvName("beta", "1.0.0")}
	ns := w.namespace(prefix)
	w.install(ns, "beta", "beta", csvName("beta", "1.0.0"))
	w.report(ns, csvName("beta", "1.0.0"), "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating the storage schema")
	w.copiedToStatus(ns, csvName("beta", "1.0.0"), "Upgradeable", metav1.ConditionFalse)
	w.opm.publish([]release{v1, v2})
	plan := w.pendingPlan(ns, "beta", csvName("beta", "2.0.0"))
	w.gate(ns, "beta", "held: not upgradeable", denies("OperatorNotUpgradeable"))
	return ns, plan
}

// lift has beta 1.0.0's operator say it is upgradeable again.
func (w *world) lift(ns string) {
	w.t.Helper()
	w.report(ns, csvName("beta", "1.0.0"), "Upgradeable", metav1.ConditionTrue, "Migrated", "the storage schema is migrated")
	w.copiedToStatus(ns, csvName("beta", "1.0.0"), "Upgradeable", metav1.ConditionTrue)
}

// The catalog goes away (opm stops): OLM reports the CatalogSource's connection lost, and
// Tollgate holds the plan on it even once the operator is upgradeable; the catalog comes
// back: approved, and OLM upgrades.
func TestUpgradeHeldWhileTheCatalogIsDown(t *testing.T) {
	w := newWorld(t, release{pkg: "beta", version: "1.0.0"})
	ns, plan := w.heldUpgrade("catalog-down-")

	w.opm.stop()
	w.catalogState("TRANSIENT_FAILURE", "CONNECTING")
	w.lift(ns)
	w.gate(ns, "beta", "held: the catalog is unhealthy", denies("CatalogSourceUnhealthy"))
	w.stillUnapproved(ns, plan.Name)
	w.fixture("catalog-down-held", "opm stopped; OLM reports the catalog's connection lost while beta's upgrade plan waits")

	w.opm.start()
	w.catalogState("READY")
	w.gate(ns, "beta", "approved once the catalog is back", approved(plan.Name))
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	w.installed(ns, "beta", csvName("beta", "2.0.0"))
}

// The CatalogSource is deleted: OLM reports it missing on the Subscription, and Tollgate
// holds the plan on it even once the operator is upgradeable.
func TestUpgradeHeldWhenTheCatalogSourceIsDeleted(t *testing.T) {
	w := newWorld(t, release{pkg: "beta", version: "1.0.0"})
	ns, plan := w.heldUpgrade("catalog-gone-")

	w.deleteCatalogSource()
	w.subscriptionCondition(ns, "beta", "CatalogSourcesUnhealthy", corev1.ConditionTrue)
	w.lift(ns)
	w.gate(ns, "beta", "held: the catalog is missing", denies("CatalogSourceUnhealthy"))
	w.stillUnapproved(ns, plan.Name)
	w.fixture("catalog-deleted-held", "the CatalogSource deleted; OLM reports it missing while beta's upgrade plan waits")
}
