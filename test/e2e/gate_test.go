package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

func TestAnOperatorThatIsNotUpgradeableHoldsItsPlanUntilItSaysSo(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.OfferUpgrade("0.9.4")

	gate := etcd.Gate("holds the new version", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.CurrentCSV == "etcd.v0.9.4" && olmplay.HasDenial(g, tollgatev1alpha1.CodeOperatorNotUpgradeable, false) &&
			meta.IsStatusConditionTrue(g.Status.Conditions, "UpgradeBlocked")
	})
	assert.Equal(t, tollgatev1alpha1.CodeOperatorNotUpgradeable, gate.Status.Decision.BlockedBy)
	assert.Contains(t, gate.Status.Decision.Denials[0].Message, "migrating storage")
	assert.Contains(t, gate.Status.Decision.Denials[0].Source, "upgrade/upgrade.rego:")
	assert.Equal(t, "etcd.v0.9.4", gate.Status.CurrentCSV)
	assert.NotEmpty(t, gate.Status.Decision.PolicyRevision)
	assert.NotEmpty(t, gate.Status.Decision.InputDigest)
	require.Len(t, gate.OwnerReferences, 1, "the gate goes away with its Subscription")
	assert.Equal(t, "Subscription", gate.OwnerReferences[0].Kind)
	for _, typ := range []string{"ResolutionFailed", "CatalogSourcesUnhealthy", "CatalogSourceInvalid", "PackageChannelInvalid",
		"InstallPlanFailed", "InstallPlanMissing", "InstallPlanAwaitingManualApproval", "InstalledCSVReplacementAvailable",
		"InstalledCSVMissing", "InstalledCSVFailed", "UpgradeBlocked"} {
		assert.NotNil(t, meta.FindStatusCondition(gate.Status.Conditions, typ), "condition %s is always present", typ)
	}
	assert.True(t, meta.IsStatusConditionTrue(gate.Status.Conditions, "UpgradeBlocked"))
	assert.Len(t, gate.Status.Health, 3)
	k.StillUnapproved(plan)
	k.event(etcd.Sub, corev1.EventTypeWarning, "UpgradeBlocked", "OperatorNotUpgradeable: ") // for kubectl describe subscription
	k.event(etcd.Sub, corev1.EventTypeWarning, "UpgradeBlocked", "kubectl tollgate explain")

	etcd.Report("Upgradeable", metav1.ConditionTrue, "migration done")
	took := k.Approved(plan)
	t.Logf("plan approved %s after the operator reported Upgradeable=True", took)
	etcd.Gate("allowed and records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan.Name
	})
	k.event(etcd.Sub, corev1.EventTypeNormal, "UpgradeAllowed", "no denial stands")
}

func TestAFirstInstallIsApproved(t *testing.T) {
	k := newCluster(t)
	redis := k.Subscribe("redis", v1alpha1.ApprovalManual)
	plan := k.Plan("install-redis", []*olmplay.Operator{redis}, "1.0.0")
	took := k.Approved(plan)
	t.Logf("first install approved %s after the plan reached RequiresApproval", took)
}

func TestAnOperatorConditionOverrideReleasesTheUpgrade(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.OfferUpgrade("0.9.4")
	etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)

	etcd.Override("Upgradeable", metav1.ConditionTrue)
	k.Approved(plan)
}

func TestAnUpgradeGateOverrideReleasesTheUpgradeAndIsRecorded(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.OfferUpgrade("0.9.4")
	gate := etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)

	patch := client.MergeFrom(gate.DeepCopy()) // the manager may write the status meanwhile
	gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: tollgatev1alpha1.CodeOperatorNotUpgradeable, Reason: "CHG-1234: vendor confirmed"}}
	require.NoError(t, k.Client.Patch(k.Ctx, gate, patch))
	k.Approved(plan)
	gate = etcd.Gate("allowed with an overridden denial", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && olmplay.HasDenial(g, tollgatev1alpha1.CodeOperatorNotUpgradeable, true)
	})
	assert.Equal(t, "CHG-1234: vendor confirmed", gate.Spec.Overrides[0].Reason, "Tollgate never overwrites spec")
}

// An override's expiry is a time edge the policies report (recheckAt): the manager, which
// here never re-evaluates periodically, evaluates the gate again then, with nothing changed.
func TestAnExpiredOverrideHoldsAgainWithoutAnyChange(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	gate := etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)

	expires := metav1.NewTime(time.Now().Add(3 * time.Second).Truncate(time.Second))
	patch := client.MergeFrom(gate.DeepCopy())
	gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: tollgatev1alpha1.CodeOperatorNotUpgradeable, Reason: "CHG-1234", Expires: &expires}}
	require.NoError(t, k.Client.Patch(k.Ctx, gate, patch))
	etcd.Gate("allowed while the override lasts", func(g *tollgatev1alpha1.UpgradeGate) bool { return g.Status.Decision.Allowed })
	gate = etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	assert.False(t, gate.Status.Decision.EvaluatedAt.Before(&expires), "held again once the override expired, at %s", gate.Status.Decision.EvaluatedAt)
}

func TestABundledPlanWithOneBlockedOperatorStaysUnapproved(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "1.0.0", v1alpha1.ApprovalManual)
	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := k.Plan("install-both", []*olmplay.Operator{etcd, redis}, "2.0.0")

	etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	redis.BlockedBy(tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator)
	k.StillUnapproved(plan)

	etcd.Report("Upgradeable", metav1.ConditionTrue, "done")
	k.Approved(plan)
}

func TestAPlanNotAwaitingApprovalIsNeverTouched(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	plan := etcd.OfferUpgrade("0.9.4")
	plan.Status.Phase = v1alpha1.InstallPlanPhaseInstalling
	require.NoError(t, k.Client.Status().Update(k.Ctx, plan))
	etcd.Gate("allowed", func(g *tollgatev1alpha1.UpgradeGate) bool { return g.Status.Decision.Allowed })
	k.StillUnapproved(plan)
}

func TestAuditModeNeverApproves(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	gate := etcd.Gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	patch := client.MergeFrom(gate.DeepCopy()) // the manager writes the status meanwhile
	gate.Spec.Mode = tollgatev1alpha1.ModeAudit
	require.NoError(t, k.Client.Patch(k.Ctx, gate, patch))
	// The manager acts on the gate as its cache holds it: once its status shows the edit
	// observed, no plan is approved. (Before that, a plan arriving in the same instant is
	// judged on the gate as it was: every input is as fresh as the watch that brings it.)
	etcd.Gate("audit mode observed", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.ObservedGeneration == gate.Generation
	})
	plan := etcd.OfferUpgrade("0.9.4")
	etcd.Gate("allowed", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.CurrentCSV == "etcd.v0.9.4"
	})
	k.StillUnapproved(plan)
}

func TestAnAutomaticSubscriptionIsReportedWithTheFix(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalAutomatic)
	gate := etcd.Gate("reports automatic approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Conditions, tollgatev1alpha1.ConditionAutomaticApproval)
	})
	c := meta.FindStatusCondition(gate.Status.Conditions, tollgatev1alpha1.ConditionAutomaticApproval)
	assert.Contains(t, c.Message, `kubectl patch subscription -n `+k.NS+` etcd --type merge -p '{"spec":{"installPlanApproval":"Manual"}}'`)
	assert.Contains(t, c.Message, "--take-over-approval")
}

func TestAnUnhealthyGlobalCatalogIsReportedButOnlyTheSourceCatalogDenies(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	global := k.Catalog(globalNS, "community-"+k.NS, "TRANSIENT_FAILURE")
	t.Cleanup(func() { _ = k.Client.Delete(k.Ctx, global) })
	plan := etcd.OfferUpgrade("0.9.4")

	etcd.Gate("CatalogSourcesUnhealthy without a denial", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Conditions, "CatalogSourcesUnhealthy") && g.Status.Decision.Allowed
	})
	k.Approved(plan)

	// The Subscription's own catalog going unhealthy does deny.
	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	k.Catalog(k.NS, "catalog", "CONNECTING")
	plan = redis.OfferUpgrade("1.1.0")
	redis.BlockedBy(tollgatev1alpha1.CodeCatalogSourceUnhealthy)
	k.StillUnapproved(plan)
}

func TestAnOperandTurningDegradedBlocksTheUpgrade(t *testing.T) {
	k := newCluster(t)
	k.ServeOperandKind("etcd")
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	healthy := olmplay.Healthy()
	operand := etcd.Operand("main", healthy...)
	etcd.Gate("healthy", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Health, "Available") && g.Status.Decision.Allowed
	})

	etcd.SetOperandConditions(operand, olmplay.Cond("Available", "True", "HealInProgress"), olmplay.Cond("Progressing", "False", "HealFailed"), olmplay.Cond("Degraded", "True", "HealFailed"))
	gate := etcd.BlockedBy(tollgatev1alpha1.CodeOperatorDegraded)
	assert.True(t, meta.IsStatusConditionTrue(gate.Status.Health, "Degraded"))
	plan := etcd.OfferUpgrade("0.9.4")
	k.StillUnapproved(plan)

	etcd.SetOperandConditions(operand, healthy...)
	k.Approved(plan)
}

func TestDeletingTheSubscriptionRemovesItsGate(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	gate := etcd.Gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	require.NoError(t, k.Client.Delete(k.Ctx, etcd.Sub))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(k.Client.Get(k.Ctx, client.ObjectKeyFromObject(gate), &tollgatev1alpha1.UpgradeGate{}))
	}, olmplay.Wait, olmplay.Tick)
}

func TestANoOpReconcileDoesNotWriteTheGate(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	gate := etcd.Gate("evaluated after the install", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.State == string(v1alpha1.SubscriptionStateAtLatest)
	})
	rv := gate.ResourceVersion
	// Touch the Subscription without changing anything the policies read.
	etcd.SetStatus(func(*v1alpha1.SubscriptionStatus) {})
	k.Catalog(k.NS, "catalog", "READY")
	require.Never(t, func() bool {
		got := &tollgatev1alpha1.UpgradeGate{}
		return k.Client.Get(k.Ctx, client.ObjectKeyFromObject(gate), got) == nil && got.ResourceVersion != rv
	}, 2*time.Second, 100*time.Millisecond, "the gate must not be rewritten when nothing changed")
}
