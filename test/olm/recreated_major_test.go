package olm

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// A Subscription created again across a major version, with the version pack loaded.
//
// Under the same name, real OLM does not resolve it while beta 1.0.0 runs: a CSV no
// Subscription reports installed must stay, and it conflicts with every bundle of its package,
// so the new Subscription fails to resolve (ResolutionFailed) and gets no plan, even once 2.0.0
// is published. Unless OLM's cache still held the deleted Subscription when it last wrote a
// status: OLM writes a status onto the Subscription of that name, as it read it, so the new
// one may inherit the old one's installed CSV, and is then resolved as before, to a plan held
// on the installed version. Either way, nothing is approved.
//
// Created again under another name before the old one is deleted (a rename, a GitOps tool that
// creates before it prunes), it is resolved: OLM moves both Subscriptions to 2.0.0 and writes
// the new one a plan of its own whose CSV replaces the running 1.0.0. Once the old one is
// deleted, the new one keeps that plan, its current CSV and no installed CSV, and OLM does not
// resolve it again. Both plans move beta from 1.0.0 to 2.0.0: Tollgate holds them with
// MajorVersionUpgrade, read from the CSV the plans replace, since the Subscription installed
// nothing (the pack once read only status.installedCSV, saw a first install, and approved).
// An admin's override of MajorVersionUpgrade lets the upgrade through, and OLM replaces
// 1.0.0 with 2.0.0: the move held was the one OLM makes.
func TestSubscriptionCreatedAgainAcrossAMajorVersionIsHeld(t *testing.T) {
	v1 := release{pkg: "beta", version: "1.0.0"}
	v2 := release{pkg: "beta", version: "2.0.0", replaces: csvName("beta", "1.0.0")}
	old, next := csvName("beta", "1.0.0"), csvName("beta", "2.0.0")
	w := newWorld(t, v1)
	w.loadPack("version")
	same := w.namespace("recreated-same-")
	w.install(same, "beta", "beta", old)
	renamed := w.namespace("recreated-renamed-")
	w.install(renamed, "beta", "beta", old)

	w.deleteSubscription(same, "beta")
	w.subscribe(same, "beta", "beta", v1alpha1.ApprovalManual)

	w.opm.publish([]release{v1, v2})
	first := w.pendingPlan(renamed, "beta", next)
	w.gate(renamed, "beta", "held: a major version", denies("MajorVersionUpgrade"))
	var sub *v1alpha1.Subscription
	w.eventually("OLM resolved the Subscription created again under the same name, with 2.0.0 published", func() bool {
		sub = w.subscription(same, "beta")
		return strings.Contains(resolutionFailed(sub), next) || sub.Status.CurrentCSV == next && sub.Status.InstallPlanRef != nil
	}, func() string { return describeSubscription(sub) })
	t.Logf("same name: %s; plans:%s", describeSubscription(sub), w.describePlans(same))
	if sub.Status.InstalledCSV == "" {
		assert.Empty(t, sub.Status.CurrentCSV, "OLM gives it no current CSV")
		assert.Nil(t, sub.Status.InstallPlanRef, "nor a plan")
		assert.Empty(t, w.plansOf(same, next), "OLM writes no plan to 2.0.0 for a Subscription it cannot resolve")
		w.gate(same, "beta", "decided", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	} else {
		assert.Equal(t, old, sub.Status.InstalledCSV, "OLM wrote the deleted Subscription's status onto the new one")
		w.gate(same, "beta", "held: a major version", denies("MajorVersionUpgrade"))
	}

	// The Subscription is created again under another name while Tollgate is down, so that its
	// first decision is on the state the deletion leaves.
	w.stopManager()
	w.subscribe(renamed, "beta-again", "beta", v1alpha1.ApprovalManual)
	second := w.pendingPlan(renamed, "beta-again", next)
	w.deleteSubscription(renamed, "beta")
	sub = w.subscription(renamed, "beta-again")
	t.Logf("another name: %s; plans:%s", describeSubscription(sub), w.describePlans(renamed))
	require.Empty(t, sub.Status.InstalledCSV, "OLM reports nothing installed for the Subscription created again")
	require.Equal(t, next, sub.Status.CurrentCSV)
	require.NotNil(t, sub.Status.InstallPlanRef)
	require.Equal(t, second.Name, sub.Status.InstallPlanRef.Name)
	for _, name := range []string{first.Name, second.Name} {
		assert.Equal(t, old, w.csvStepReplaces(renamed, name, next), "plan %s replaces the running CSV", name)
	}
	w.csvPhase(renamed, old, v1alpha1.CSVPhaseSucceeded)

	w.startManager(defaultOptions())
	gate := w.gate(renamed, "beta-again", "held: a major version from the CSV its plan replaces", denies("MajorVersionUpgrade"))
	i := slices.IndexFunc(gate.Status.Decision.Denials, func(d tollgatev1alpha1.Denial) bool { return d.Code == "MajorVersionUpgrade" })
	assert.Contains(t, gate.Status.Decision.Denials[i].Message, "from 1.0.0 to 2.0.0")
	w.everyPlanUnapproved(renamed)
	w.everyPlanUnapproved(same)
	w.fixture("recreated-across-major", "beta 1.0.0 runs, 2.0.0 is published; its Subscription created again under the same name (OLM fails to resolve it, or gives it the deleted one's status), and under another name before the old one is deleted (OLM gives it a plan to 2.0.0 that replaces 1.0.0, and no installed CSV); held only by the version pack")
	assert.False(t, w.get(renamed, next, &v1alpha1.ClusterServiceVersion{}), "OLM creates no CSV for an unapproved plan")

	w.overrideOnGate(renamed, "beta-again", "MajorVersionUpgrade", "2.0.0 tested in staging")
	w.gate(renamed, "beta-again", "allows the upgrade once the admin overrides the hold", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan != ""
	})
	w.csvPhase(renamed, next, v1alpha1.CSVPhaseSucceeded)
	w.gone(renamed, old, &v1alpha1.ClusterServiceVersion{})
	w.installed(renamed, "beta-again", next)
	t.Logf("after the override:%s", w.describePlans(renamed))
}
