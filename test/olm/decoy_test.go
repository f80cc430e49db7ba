package olm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// A second Subscription to the same package, channel and catalog beside a held one: OLM
// writes the plan's CSV into the decoy's status.currentCSV itself, and the decoy, with no
// installed CSV of its own, must not let the plan through.
func TestDecoySubscriptionDoesNotApproveAHeldPlan(t *testing.T) {
	w := newWorld(t, release{pkg: "beta", version: "1.0.0"})
	ns, plan := w.heldUpgrade("decoy-")

	w.subscribe(ns, "a-decoy", "beta", v1alpha1.ApprovalManual)
	var decoy *v1alpha1.Subscription
	w.eventually("OLM resolved the decoy", func() bool {
		decoy = w.subscription(ns, "a-decoy")
		return decoy.Status.CurrentCSV != "" || decoy.Status.State != ""
	}, func() string { return "status " + describe(decoy.Status) })
	t.Logf("OLM wrote the decoy's status: currentCSV %q, installedCSV %q, state %q, plan %v",
		decoy.Status.CurrentCSV, decoy.Status.InstalledCSV, decoy.Status.State, decoy.Status.InstallPlanRef)
	w.gate(ns, "a-decoy", "decided", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	w.stillUnapproved(ns, plan.Name)
	w.everyPlanUnapproved(ns, plan.Name)
	w.fixture("decoy-held", "a second Subscription to beta beside the held one, its status as OLM wrote it")
}

// A second OperatorGroup in the namespace: OLM refuses to act there (the CSV fails with
// TooManyOperatorGroups), and Tollgate holds the waiting plan on it, even once the operator
// is upgradeable.
func TestSecondOperatorGroupHoldsThePlan(t *testing.T) {
	w := newWorld(t, release{pkg: "beta", version: "1.0.0"})
	ns, plan := w.heldUpgrade("two-groups-")

	w.create(&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "another"},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{globalNS}}})
	csv := w.csvPhase(ns, csvName("beta", "1.0.0"), v1alpha1.CSVPhaseFailed)
	assert.Equal(t, "TooManyOperatorGroups", string(csv.Status.Reason), "OLM's own verdict")
	w.lift(ns)
	w.gate(ns, "beta", "held: two OperatorGroups", denies("TooManyOperatorGroups"))
	w.stillUnapproved(ns, plan.Name)
	w.fixture("two-operator-groups-held", "a second OperatorGroup; OLM fails the CSV with TooManyOperatorGroups while the upgrade plan waits")
}

// The Subscription is deleted and created again while the operator says it is not
// upgradeable. Real OLM refuses to resolve it (ResolutionFailed: the installed CSV "exists and
// is not referenced by a subscription") and leaves the old plan waiting: no plan is approved.
func TestRecreatedSubscriptionDoesNotApproveAHeldPlan(t *testing.T) {
	w := newWorld(t, release{pkg: "beta", version: "1.0.0"})
	ns, plan := w.heldUpgrade("recreated-")

	w.deleteSubscription(ns, "beta")
	w.subscribe(ns, "beta", "beta", v1alpha1.ApprovalManual)
	w.subscriptionCondition(ns, "beta", "ResolutionFailed", corev1.ConditionTrue)
	w.lift(ns)
	w.report(ns, csvName("beta", "1.0.0"), "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating the storage schema again")
	w.copiedToStatus(ns, csvName("beta", "1.0.0"), "Upgradeable", metav1.ConditionFalse)
	w.gate(ns, "beta", "decided", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	w.everyPlanUnapproved(ns)
	assert.False(t, w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseRequiresApproval).Spec.Approved)
	w.fixture("recreated-subscription-held", "beta's Subscription deleted and created again while 1.0.0 says Upgradeable=False; OLM fails to resolve it and the old plan waits")
}
