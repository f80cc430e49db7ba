package faults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// TestTheManagerConvergesAfterTheAPIServerRestarts stops the kube-apiserver under a running
// manager (etcd keeps everything) and starts it again. What changed just before the stop,
// which the manager may or may not have acted on, and what changes after the restart, is
// decided: the plans allowed are approved once each, carrying their record, and the ones held
// stay unapproved.
func TestTheManagerConvergesAfterTheAPIServerRestarts(t *testing.T) {
	k := olmplay.NewCluster(t, env.Client, "restart-")
	f := (&faults{ns: k.NS}).init()
	startManager(t, f, managerOptions{name: "tollgate-restart"})

	// Decided before the restart: one plan approved, one held.
	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	redis.Report("Upgradeable", metav1.ConditionTrue, "ready")
	redisPlan := redis.OfferUpgrade("2.0.0")
	k.Approved(redisPlan)
	etcd := k.Install("etcd", "1.0.0", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	etcdPlan := etcd.OfferUpgrade("2.0.0")
	etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	kafka := k.Install("kafka", "1.0.0", v1alpha1.ApprovalManual)
	kafka.Report("Upgradeable", metav1.ConditionTrue, "ready")
	mongo := k.Install("mongo", "1.0.0", v1alpha1.ApprovalManual)
	mongo.Report("Upgradeable", metav1.ConditionFalse, "rebalancing")
	mongoPlan := mongo.OfferUpgrade("2.0.0")
	mongo.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	k.StillUnapproved(etcdPlan)

	// Changed right before the stop: the manager may not get to them before the API server
	// goes away (its writes then fail), or not even see them.
	mongo.Report("Upgradeable", metav1.ConditionTrue, "rebalanced")
	nats := k.Subscribe("nats", v1alpha1.ApprovalManual)
	natsPlan := k.Plan("install-nats", []*olmplay.Operator{nats}, "1.0.0")

	stopping := time.Now()
	require.NoError(t, env.StopAPIServer(3*time.Second))
	stopped := time.Now()
	require.Error(t, env.Client.Get(k.Ctx, clientKey(etcdPlan), &v1alpha1.InstallPlan{}), "the API server is down")
	time.Sleep(2 * time.Second) // the manager's watches and writes fail meanwhile
	require.NoError(t, env.StartAPIServer())
	started := time.Now()
	require.Eventually(t, func() bool {
		return env.Client.Get(k.Ctx, clientKey(etcdPlan), &v1alpha1.InstallPlan{}) == nil
	}, wait, tick, "the API server answers again")
	t.Logf("kube-apiserver stopped in %s (SIGTERM, SIGKILL after 3s), started again after %s down, answering %s later",
		stopped.Sub(stopping).Round(time.Millisecond), started.Sub(stopped).Round(time.Millisecond), time.Since(started).Round(time.Millisecond))

	// What changed before the stop is decided.
	approvedWithin(t, k, mongoPlan)
	approvedWithin(t, k, natsPlan)

	// Changed after the restart: one held plan allowed, one allowed operator held.
	etcd.Report("Upgradeable", metav1.ConditionTrue, "migration done")
	kafka.Report("Upgradeable", metav1.ConditionFalse, "reindexing")
	approvedWithin(t, k, etcdPlan)
	kafka.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	kafkaPlan := kafka.OfferUpgrade("2.0.0")
	kafka.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	k.StillUnapproved(kafkaPlan)

	for op, plan := range map[*olmplay.Operator]*v1alpha1.InstallPlan{redis: redisPlan, etcd: etcdPlan, mongo: mongoPlan, nats: natsPlan} {
		op.Gate("allowed, recording "+plan.Name, func(g *tollgatev1alpha1.UpgradeGate) bool {
			return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan.Name
		})
	}
	settle()
	for _, plan := range []string{redisPlan.Name, etcdPlan.Name, mongoPlan.Name, natsPlan.Name} {
		assert.Equal(t, 1, f.Approvals(plan), "plan %s approved exactly once", plan)
	}
	assert.Zero(t, f.Approvals(kafkaPlan.Name))
	approvedWithTheirRecord(t, f.Log(), map[string]string{redisPlan.Name: "redis", etcdPlan.Name: "etcd", mongoPlan.Name: "mongo", natsPlan.Name: "nats"})
}

// approvedWithin waits, through a fault, for the plan's approval.
func approvedWithin(t *testing.T, k *olmplay.Cluster, plan *v1alpha1.InstallPlan) {
	t.Helper()
	start := time.Now()
	require.Eventually(t, func() bool { return k.PlanApproved(plan) }, wait, tick, "install plan %s was not approved", plan.Name)
	t.Logf("%s approved after %s", plan.Name, time.Since(start).Round(time.Millisecond))
}
