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
)

func TestAnOperatorThatIsNotUpgradeableHoldsItsPlanUntilItSaysSo(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.offerUpgrade("0.9.4")

	gate := etcd.gate("holds the new version", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.CurrentCSV == "etcd.v0.9.4" && hasDenial(g, tollgatev1alpha1.CodeOperatorNotUpgradeable, false) &&
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
	k.stillUnapproved(plan)
	k.event(etcd.sub, corev1.EventTypeWarning, "UpgradeBlocked", "kubectl tollgate explain")

	etcd.report("Upgradeable", metav1.ConditionTrue, "migration done")
	took := k.approved(plan)
	t.Logf("plan approved %s after the operator reported Upgradeable=True", took)
	etcd.gate("allowed and records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan.Name
	})
	k.event(plan, corev1.EventTypeNormal, "InstallPlanApproved", "every operator it installs is allowed")
}

func TestAFirstInstallIsApproved(t *testing.T) {
	k := newCluster(t)
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "redis"},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "catalog", CatalogSourceNamespace: k.ns, Package: "redis", Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual}}
	k.create(sub)
	redis := &operator{k: k, name: "redis", sub: sub}
	plan := k.plan("install-redis", []*operator{redis}, "1.0.0")
	took := k.approved(plan)
	t.Logf("first install approved %s after the plan reached RequiresApproval", took)
}

func TestAnOperatorConditionOverrideReleasesTheUpgrade(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.offerUpgrade("0.9.4")
	etcd.blockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)

	etcd.override("Upgradeable", metav1.ConditionTrue)
	k.approved(plan)
}

func TestAnUpgradeGateOverrideReleasesTheUpgradeAndIsRecorded(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.offerUpgrade("0.9.4")
	gate := etcd.blockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)

	gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: tollgatev1alpha1.CodeOperatorNotUpgradeable, Reason: "CHG-1234: vendor confirmed"}}
	require.NoError(t, k.c.Update(k.ctx, gate))
	k.approved(plan)
	gate = etcd.gate("allowed with an overridden denial", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && hasDenial(g, tollgatev1alpha1.CodeOperatorNotUpgradeable, true)
	})
	assert.Equal(t, "CHG-1234: vendor confirmed", gate.Spec.Overrides[0].Reason, "Tollgate never overwrites spec")
}

func TestABundledPlanWithOneBlockedOperatorStaysUnapproved(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "1.0.0", v1alpha1.ApprovalManual)
	redis := k.install("redis", "1.0.0", v1alpha1.ApprovalManual)
	etcd.report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := k.plan("install-both", []*operator{etcd, redis}, "2.0.0")

	etcd.blockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	redis.blockedBy(tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator)
	k.stillUnapproved(plan)

	etcd.report("Upgradeable", metav1.ConditionTrue, "done")
	k.approved(plan)
}

func TestAPlanNotAwaitingApprovalIsNeverTouched(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	plan := etcd.offerUpgrade("0.9.4")
	plan.Status.Phase = v1alpha1.InstallPlanPhaseInstalling
	require.NoError(t, k.c.Status().Update(k.ctx, plan))
	etcd.gate("allowed", func(g *tollgatev1alpha1.UpgradeGate) bool { return g.Status.Decision.Allowed })
	k.stillUnapproved(plan)
}

func TestAuditModeNeverApproves(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	gate := etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	gate.Spec.Mode = tollgatev1alpha1.ModeAudit
	require.NoError(t, k.c.Update(k.ctx, gate))
	plan := etcd.offerUpgrade("0.9.4")
	etcd.gate("allowed", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.CurrentCSV == "etcd.v0.9.4"
	})
	k.stillUnapproved(plan)
}

func TestAnAutomaticSubscriptionIsReportedWithTheFix(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalAutomatic)
	gate := etcd.gate("reports automatic approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Conditions, tollgatev1alpha1.ConditionAutomaticApproval)
	})
	c := meta.FindStatusCondition(gate.Status.Conditions, tollgatev1alpha1.ConditionAutomaticApproval)
	assert.Contains(t, c.Message, `kubectl patch subscription -n `+k.ns+` etcd --type merge -p '{"spec":{"installPlanApproval":"Manual"}}'`)
	assert.Contains(t, c.Message, "--take-over-approval")
}

func TestAnUnhealthyGlobalCatalogIsReportedButOnlyTheSourceCatalogDenies(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	global := k.catalog(globalNS, "community-"+k.ns, "TRANSIENT_FAILURE")
	t.Cleanup(func() { _ = k.c.Delete(k.ctx, global) })
	plan := etcd.offerUpgrade("0.9.4")

	etcd.gate("CatalogSourcesUnhealthy without a denial", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Conditions, "CatalogSourcesUnhealthy") && g.Status.Decision.Allowed
	})
	k.approved(plan)

	// The Subscription's own catalog going unhealthy does deny.
	redis := k.install("redis", "1.0.0", v1alpha1.ApprovalManual)
	k.catalog(k.ns, "catalog", "CONNECTING")
	plan = redis.offerUpgrade("1.1.0")
	redis.blockedBy(tollgatev1alpha1.CodeCatalogSourceUnhealthy)
	k.stillUnapproved(plan)
}

func TestAnOperandTurningDegradedBlocksTheUpgrade(t *testing.T) {
	k := newCluster(t)
	k.installCRD("etcd")
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	healthy := []metav1.Condition{cond("Available", "True", "InstallSucceeded"), cond("Progressing", "False", "InstallSucceeded"), cond("Degraded", "False", "InstallSucceeded")}
	operand := etcd.operand("main", healthy...)
	etcd.gate("healthy", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return meta.IsStatusConditionTrue(g.Status.Health, "Available") && g.Status.Decision.Allowed
	})

	etcd.setOperandConditions(operand, cond("Available", "True", "HealInProgress"), cond("Progressing", "False", "HealFailed"), cond("Degraded", "True", "HealFailed"))
	gate := etcd.blockedBy(tollgatev1alpha1.CodeOperatorDegraded)
	assert.True(t, meta.IsStatusConditionTrue(gate.Status.Health, "Degraded"))
	plan := etcd.offerUpgrade("0.9.4")
	k.stillUnapproved(plan)

	etcd.setOperandConditions(operand, healthy...)
	k.approved(plan)
}

func TestDeletingTheSubscriptionRemovesItsGate(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	gate := etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	require.NoError(t, k.c.Delete(k.ctx, etcd.sub))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(k.c.Get(k.ctx, client.ObjectKeyFromObject(gate), &tollgatev1alpha1.UpgradeGate{}))
	}, wait, tick)
}

func TestANoOpReconcileDoesNotWriteTheGate(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	gate := etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	rv := gate.ResourceVersion
	// Touch the Subscription without changing anything the policies read.
	etcd.setStatus(func(*v1alpha1.SubscriptionStatus) {})
	k.catalog(k.ns, "catalog", "READY")
	require.Never(t, func() bool {
		got := &tollgatev1alpha1.UpgradeGate{}
		return k.c.Get(k.ctx, client.ObjectKeyFromObject(gate), got) == nil && got.ResourceVersion != rv
	}, 2*time.Second, 100*time.Millisecond, "the gate must not be rewritten when nothing changed")
}
