package faults

import (
	"testing"

	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// TestWriteConflictsAreRetried runs the manager through a client whose writes conflict: the
// first statusConflicts status writes of every gate answer 409, one plan's approval meets a
// real concurrent write (the API server answers 409 to its resourceVersion precondition),
// another's first approval answers a 409 invented by the client. Every plan allowed is
// approved exactly once, carrying its gate's record; a plan whose operator is not upgradeable
// is approved by nobody until it is.
func TestWriteConflictsAreRetried(t *testing.T) {
	const statusConflicts = 3
	k := olmplay.NewCluster(t, env.Client, "conflicts-")
	f := (&faults{ns: k.NS, statusConflicts: statusConflicts, writer: env.Client,
		concurrentWrite: map[string]bool{"install-redis-2-0-0": true},
		fakeConflict:    map[string]bool{"install-kafka-2-0-0": true},
	}).init()
	startManager(t, f, managerOptions{name: "tollgate-conflicts"})

	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	redis.Report("Upgradeable", metav1.ConditionTrue, "ready")
	kafka := k.Install("kafka", "1.0.0", v1alpha1.ApprovalManual)
	kafka.Report("Upgradeable", metav1.ConditionTrue, "ready")
	etcd := k.Install("etcd", "1.0.0", v1alpha1.ApprovalManual)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)

	redisPlan := redis.OfferUpgrade("2.0.0")
	kafkaPlan := kafka.OfferUpgrade("2.0.0")
	etcdPlan := etcd.OfferUpgrade("2.0.0")

	k.Approved(redisPlan)
	redis.Gate("records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == redisPlan.Name
	})
	// The invented conflict stands for no newer version of the plan, so no update event
	// follows it; the manager re-evaluates a plan on its events (or the safety-net period,
	// never here), so once it has had its chance the test brings one, as OLM's next status
	// write would.
	require.Eventually(t, func() bool { return f.Conflicts("approve-fake") == 1 }, wait, tick, "the manager tried to approve %s", kafkaPlan.Name)
	settle()
	if !k.PlanApproved(kafkaPlan) {
		t.Logf("%s not approved after the invented conflict until its next event", kafkaPlan.Name)
		nudge(t, k, kafkaPlan)
	}
	k.Approved(kafkaPlan)
	kafka.Gate("records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == kafkaPlan.Name
	})
	etcd.BlockedBy(tollgatev1alpha1.CodeOperatorNotUpgradeable)
	k.StillUnapproved(etcdPlan)
	assert.Zero(t, f.Approvals(etcdPlan.Name), "nothing approves a plan whose operator is not upgradeable")

	etcd.Report("Upgradeable", metav1.ConditionTrue, "migration done")
	k.Approved(etcdPlan)
	etcd.Gate("records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == etcdPlan.Name
	})

	settle() // late retries would show below
	for _, plan := range []string{redisPlan.Name, kafkaPlan.Name, etcdPlan.Name} {
		assert.Equal(t, 1, f.Approvals(plan), "plan %s approved exactly once", plan)
	}
	assert.Equal(t, 3*statusConflicts, f.Conflicts("status"), "every gate's first status writes conflicted")
	// At least once: a reconcile queued before the other writer's event reaches the cache
	// tries the version it read, and meets the precondition again (nothing approved).
	assert.GreaterOrEqual(t, f.Conflicts("approve-real"), 1, "the API server refused the approval racing the other writer")
	assert.Equal(t, 1, f.Conflicts("approve-fake"), "one invented conflict on an approval")
	approvedWithTheirRecord(t, f.Log(), map[string]string{redisPlan.Name: "redis", kafkaPlan.Name: "kafka", etcdPlan.Name: "etcd"})
	require.NotEmpty(t, f.Log())
	t.Logf("faults: %d status conflicts, %d real and %d invented approval conflicts; writes: %q",
		f.Conflicts("status"), f.Conflicts("approve-real"), f.Conflicts("approve-fake"), f.Log())
}

// nudge changes the plan as another writer would (a label), which brings its update event;
// a plan the manager approves meanwhile needs no nudge.
func nudge(t *testing.T, k *olmplay.Cluster, plan *v1alpha1.InstallPlan) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1alpha1.InstallPlan{}
		if err := k.Client.Get(k.Ctx, client.ObjectKeyFromObject(plan), got); err != nil || got.Spec.Approved {
			return err
		}
		got.Labels = map[string]string{"nudged": "true"}
		return k.Client.Update(k.Ctx, got)
	}))
}

// settle gives the managers every chance to act (retries, re-evaluations) before the test
// counts what they did.
func settle() { time.Sleep(time.Second) }

// TestAFailedApprovalIsRetriedAndItsRecordSettles: when an approval fails (a 409: the plan
// changed meanwhile, or here also a 409 with nothing changed, which brings no event), the
// gate is evaluated again a second later: the plan is approved then, exactly once, and in the
// end every gate records only a plan that is approved.
func TestAFailedApprovalIsRetriedAndItsRecordSettles(t *testing.T) {
	k := olmplay.NewCluster(t, env.Client, "withdraw-")
	f := (&faults{ns: k.NS, writer: env.Client,
		fakeConflict:    map[string]bool{"install-redis-2-0-0": true},
		concurrentWrite: map[string]bool{"install-kafka-2-0-0": true},
	}).init()
	startManager(t, f, managerOptions{name: "tollgate-withdraw"})

	redis := k.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	redis.Report("Upgradeable", metav1.ConditionTrue, "ready")
	kafka := k.Install("kafka", "1.0.0", v1alpha1.ApprovalManual)
	kafka.Report("Upgradeable", metav1.ConditionTrue, "ready")
	redisPlan, kafkaPlan := redis.OfferUpgrade("2.0.0"), kafka.OfferUpgrade("2.0.0")
	require.Eventually(t, func() bool { return f.Conflicts("approve-fake") == 1 && f.Conflicts("approve-real") == 1 }, wait, tick,
		"the manager tried to approve %s and %s", redisPlan.Name, kafkaPlan.Name)
	k.Approved(kafkaPlan) // the concurrent write's event re-evaluates it
	k.Approved(redisPlan) // the failed reconcile evaluates again, though nothing changed
	for op, plan := range map[*olmplay.Operator]*v1alpha1.InstallPlan{redis: redisPlan, kafka: kafkaPlan} {
		op.Gate("recording "+plan.Name, func(g *tollgatev1alpha1.UpgradeGate) bool {
			return g.Status.Decision.LastApprovedInstallPlan == plan.Name
		})
	}
	settle()
	assert.Equal(t, 1, f.Approvals(redisPlan.Name))
	assert.Equal(t, 1, f.Approvals(kafkaPlan.Name))
}
