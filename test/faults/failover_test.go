package faults

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// TestAStandbyTakesOverWhenTheLeaderIsKilled runs two managers electing a leader, as two
// replicas do, each with its own client. The leader approves; it is killed (its context
// cancelled without releasing the lease, as a killed process would); the standby takes over
// once the lease expires and approves what became approvable meanwhile. No plan is approved
// twice across both, and no plan is approved while its operator says it is not upgradeable.
func TestAStandbyTakesOverWhenTheLeaderIsKilled(t *testing.T) {
	k := olmplay.NewCluster(t, env.Client, "failover-")
	approved := watchApprovals(t, k)
	fa, fb := (&faults{ns: k.NS}).init(), (&faults{ns: k.NS}).init()
	a := startManager(t, fa, managerOptions{name: "tollgate-a", leaseNamespace: k.NS})
	require.Eventually(t, a.elected, wait, tick, "the first manager leads")
	b := startManager(t, fb, managerOptions{name: "tollgate-b", leaseNamespace: k.NS})

	// The leader decides.
	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	redis.Report("Upgradeable", metav1.ConditionTrue, "ready")
	redisPlan := redis.OfferUpgrade("2.0.0")
	k.Approved(redisPlan)
	etcd := k.Install("etcd", "1.0.0", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	etcdPlan := etcd.OfferUpgrade("2.0.0")
	etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	kafka := k.Install("kafka", "1.0.0", v1alpha1.ApprovalManual)
	kafka.Report("Upgradeable", metav1.ConditionFalse, "reindexing")
	kafka.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	mongo := k.Install("mongo", "1.0.0", v1alpha1.ApprovalManual)
	mongo.Report("Upgradeable", metav1.ConditionTrue, "ready")
	k.StillUnapproved(etcdPlan)
	assert.False(t, b.elected(), "the standby waits while the leader renews its lease")
	assert.Equal(t, 1, fa.Approvals(redisPlan.Name))

	// The leader dies holding the lease; meanwhile things change with nobody to act on them.
	a.kill(t)
	killed := time.Now()
	etcd.Report("Upgradeable", metav1.ConditionTrue, "migration done")
	nats := k.Subscribe("nats", v1alpha1.ApprovalManual)
	natsPlan := k.Plan("install-nats", []*olmplay.Operator{nats}, "1.0.0")
	kafkaPlan := kafka.OfferUpgrade("2.0.0") // its operator said not upgradeable before the leader died

	require.Eventually(t, b.elected, leaseDuration+wait, tick, "the standby takes over")
	tookOver := time.Since(killed)
	t.Logf("the standby leads %s after the leader was killed (lease %s, retry %s)", tookOver.Round(time.Millisecond), leaseDuration, retryPeriod)
	approvedWithin(t, k, etcdPlan)
	approvedWithin(t, k, natsPlan)

	// The new leader holds what it should: an operator that was upgradeable says it no longer
	// is, and only once its gate says so is its upgrade offered.
	mongo.Report("Upgradeable", metav1.ConditionFalse, "rebalancing")
	mongo.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	mongoPlan := mongo.OfferUpgrade("2.0.0")
	kafka.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	mongo.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	k.StillUnapproved(kafkaPlan)
	k.StillUnapproved(mongoPlan)

	for op, plan := range map[*olmplay.Operator]*v1alpha1.InstallPlan{redis: redisPlan, etcd: etcdPlan, nats: natsPlan} {
		op.Gate("allowed, recording "+plan.Name, func(g *tollgatev1alpha1.UpgradeGate) bool {
			return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan.Name
		})
	}
	settle()
	assert.Equal(t, 1, fa.Approvals(redisPlan.Name), "the first leader approved %s", redisPlan.Name)
	for _, plan := range []string{etcdPlan.Name, natsPlan.Name} {
		assert.Zero(t, fa.Approvals(plan), "the killed leader approved nothing more")
		assert.Equal(t, 1, fb.Approvals(plan), "the new leader approved %s once", plan)
	}
	assert.Zero(t, fb.Approvals(redisPlan.Name), "the new leader did not approve again what the first approved")
	for _, plan := range []string{kafkaPlan.Name, mongoPlan.Name} {
		assert.Zero(t, fa.Approvals(plan)+fb.Approvals(plan), "nobody approved %s", plan)
	}
	approvedWithTheirRecord(t, fa.Log(), map[string]string{redisPlan.Name: "redis"})
	approvedWithTheirRecord(t, fb.Log(), map[string]string{etcdPlan.Name: "etcd", natsPlan.Name: "nats"})
	assert.ElementsMatch(t, []string{redisPlan.Name, etcdPlan.Name, natsPlan.Name}, approved(),
		"the plans the API server saw approved, each once")
}

// watchApprovals watches the namespace's InstallPlans from now on and returns what it saw
// approved: each plan once, when it turned approved.
func watchApprovals(t *testing.T, k *olmplay.Cluster) func() []string {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(k.Ctx)
	w, err := c.Watch(ctx, &v1alpha1.InstallPlanList{}, client.InNamespace(k.NS))
	require.NoError(t, err)
	var (
		mu   sync.Mutex
		seen []string
		was  = map[string]bool{}
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			plan, ok := ev.Object.(*v1alpha1.InstallPlan)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			mu.Lock()
			if plan.Spec.Approved && !was[plan.Name] {
				seen = append(seen, plan.Name)
			}
			was[plan.Name] = plan.Spec.Approved
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
