package olm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// A replacement chain, as real OLM makes it. zeta 1.0.0 runs and says Upgradeable=False;
// Tollgate holds OLM's plan to 1.1.0, and a person approves it by hand (nothing but the
// gate-lock component would stop them). OLM runs the plan: 1.1.0 is created and waits in
// Pending (OperatorConditionNotUpgradeable), 1.0.0 is Replacing and keeps running, and the
// Subscription reports 1.1.0 installed and AtLatestKnown. A second Subscription to zeta,
// created and deleted again before the hand approval, left a plan of its own to 1.1.0
// (replacing 1.0.0) that still waits: Tollgate does not approve it, though the Subscription
// that claims it reports 1.1.0 installed, since the move it makes is from 1.0.0, which says
// Upgradeable=False. (While both Subscriptions exist, OLM's olm operator rewrites the first
// plan over and over, so the catalog operator never gets to run it: the second one is deleted
// first.)
//
// Then 1.2.0, which replaces 1.1.0, is published. OLM writes no plan for it: 1.0.0, which no
// Subscription reports installed any more, must stay, and it conflicts with every other CSV of
// its package, so every resolution of the namespace fails (ResolutionFailed) as long as the
// chain stands. Nothing is approved. A plan that would move up that chain (1.2.0 replacing the
// Pending 1.1.0 while 1.0.0 says Upgradeable=False) is not a state real OLM writes; the
// approval tests judge it on a hand-made state.
//
// Once 1.0.0 says Upgradeable=True, OLM finishes the chain (1.1.0 succeeds, 1.0.0 is
// deleted); resolving again (at the catalog's next change), its plan to 1.2.0 replaces 1.1.0
// alone, and Tollgate approves it.
func TestReplacementChainLeftByAHandApprovalIsNeverApproved(t *testing.T) {
	v1 := release{pkg: "zeta", version: "1.0.0"}
	v2 := release{pkg: "zeta", version: "1.1.0", replaces: csvName("zeta", "1.0.0")}
	v3 := release{pkg: "zeta", version: "1.2.0", replaces: csvName("zeta", "1.1.0")}
	c1, c2, c3 := csvName("zeta", "1.0.0"), csvName("zeta", "1.1.0"), csvName("zeta", "1.2.0")
	w := newWorld(t, v1)
	ns := w.namespace("chain-")
	w.install(ns, "zeta", "zeta", c1)
	w.report(ns, c1, "Upgradeable", metav1.ConditionFalse, "Migrating", "migrating the storage schema")
	w.copiedToStatus(ns, c1, "Upgradeable", metav1.ConditionFalse)

	w.opm.publish([]release{v1, v2})
	second := w.pendingPlan(ns, "zeta", c2)
	w.gate(ns, "zeta", "held: not upgradeable", denies("OperatorNotUpgradeable"))
	w.subscribe(ns, "zeta-decoy", "zeta", v1alpha1.ApprovalManual)
	decoy := w.pendingPlan(ns, "zeta-decoy", c2)
	require.NotEqual(t, second.Name, decoy.Name, "OLM writes the second Subscription a plan of its own")
	w.deleteSubscription(ns, "zeta-decoy")
	w.stillUnapproved(ns, second.Name)
	w.approveByHand(ns, second.Name)
	w.bypassReported(ns, "zeta", second.Name)
	w.planPhase(ns, second.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvReason(ns, c2, v1alpha1.CSVPhasePending, "OperatorConditionNotUpgradeable")
	w.csvPhase(ns, c1, v1alpha1.CSVPhaseReplacing)
	w.installed(ns, "zeta", c2)
	// The second Subscription's plan still waits: it would create 1.1.0 from 1.0.0, which says
	// Upgradeable=False.
	assert.Equal(t, c1, w.csvStepReplaces(ns, decoy.Name, c2))
	w.stillUnapproved(ns, decoy.Name)

	w.opm.publish([]release{v1, v2, v3})
	var sub *v1alpha1.Subscription
	w.eventually("OLM resolved the namespace with "+c3+" published", func() bool {
		sub = w.subscription(ns, "zeta")
		return strings.Contains(resolutionFailed(sub), c3)
	}, func() string { return describeSubscription(sub) + w.describePlans(ns) + w.describeCSVs(ns) })
	t.Logf("the chain, with %s published: %s; plans:%s; CSVs:%s", c3, describeSubscription(sub), w.describePlans(ns), w.describeCSVs(ns))
	assert.Contains(t, resolutionFailed(sub), "clusterserviceversion "+c1+" exists and is not referenced by a subscription")
	assert.Equal(t, c2, sub.Status.InstalledCSV, "OLM reports the Pending CSV installed")
	assert.Equal(t, c2, sub.Status.CurrentCSV)
	assert.Empty(t, w.plansOf(ns, c3), "OLM writes no plan while the chain stands")
	w.gate(ns, "zeta", "decided", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	w.everyPlanUnapproved(ns)
	w.csvReason(ns, c2, v1alpha1.CSVPhasePending, "OperatorConditionNotUpgradeable")
	w.csvPhase(ns, c1, v1alpha1.CSVPhaseReplacing)
	w.fixture("replacement-chain-held", "zeta 1.0.0 says Upgradeable=False and is Replacing; 1.1.0, approved by hand, waits Pending (OperatorConditionNotUpgradeable) and is reported installed; a deleted second Subscription's plan to 1.1.0 (replacing 1.0.0) waits; 1.2.0 is published and OLM fails to resolve (1.0.0 is not referenced by a Subscription)")

	// The second Subscription's plan is removed, as a person cleaning up does.
	require.NoError(t, w.c.Delete(w.ctx, decoy))
	w.gone(ns, decoy.Name, &v1alpha1.InstallPlan{})
	w.report(ns, c1, "Upgradeable", metav1.ConditionTrue, "Migrated", "the storage schema is migrated")
	w.csvPhase(ns, c2, v1alpha1.CSVPhaseSucceeded)
	w.gone(ns, c1, &v1alpha1.ClusterServiceVersion{})
	// Deleting a CSV requeues no namespace for resolution: OLM resolves again on its periodic
	// resync, or at once when the catalog next changes, as here. Tollgate is stopped meanwhile,
	// so that the state OLM writes is captured before it decides.
	w.stopManager()
	w.opm.publish([]release{v1, v2, v3})
	third := w.pendingPlan(ns, "zeta", c3)
	w.planPhase(ns, third.Name, v1alpha1.InstallPlanPhaseRequiresApproval)
	assert.Equal(t, c2, w.csvStepReplaces(ns, third.Name, c3), "once the chain is gone, OLM's plan replaces 1.1.0")
	w.fixture("replacement-chain-ended", "zeta's replacement chain ended (1.0.0 said Upgradeable=True, 1.1.0 succeeded, 1.0.0 deleted); at the catalog's next change OLM's plan to 1.2.0 replaces 1.1.0 and waits")
	w.startManager(defaultOptions())
	w.gate(ns, "zeta", "approved the upgrade from 1.1.0", approved(third.Name))
	w.planPhase(ns, third.Name, v1alpha1.InstallPlanPhaseComplete)
	w.csvPhase(ns, c3, v1alpha1.CSVPhaseSucceeded)
	w.installed(ns, "zeta", c3)
}
