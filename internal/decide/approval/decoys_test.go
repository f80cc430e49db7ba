package approval_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// decoys are the states in test/testdata/decoys: each holds a plan that must stay held, and
// the Subscription and code that hold it.
var decoys = []struct {
	file, plan, holder, code string
}{
	{"decoy-first-install", "team-a/install-etcd-094", "team-a/etcd", "OperatorNotUpgradeable"},
	{"decoy-upgradeable", "team-a/install-etcd-094", "team-a/etcd", "OperatorNotUpgradeable"},
	{"decoy-degraded", "team-a/install-etcd-094", "team-a/etcd", "OperatorDegraded"},
	{"decoy-bundled", "team-c/install-team-c", "team-c/prometheus", "OperatorNotUpgradeable"},
	{"two-operator-groups", "team-a/install-etcd-094", "team-a/etcd", "TooManyOperatorGroups"},
	{"operand-other-version", "team-a/install-etcd-094", "team-a/etcd", "OperatorDegraded"},
	{"recreated-subscription", "team-a/install-etcd-094", "team-a/etcd", "OperatorNotUpgradeable"},
}

// gated loads a snapshot file and gives every Subscription the UpgradeGate the manager creates.
func gated(t *testing.T, file string) *snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.Load(file)
	require.NoError(t, err)
	var subs v1alpha1.SubscriptionList
	require.NoError(t, snap.List(context.Background(), &subs))
	for i := range subs.Items {
		err := snap.Get(context.Background(), client.ObjectKeyFromObject(&subs.Items[i]), &tollgatev1alpha1.UpgradeGate{})
		if err != nil {
			require.NoError(t, snap.Add(gatestatus.New(&subs.Items[i])))
		}
	}
	return snap
}

func TestNoApprovalThroughADecoy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range decoys {
		t.Run(tc.file, func(t *testing.T) {
			snap := gated(t, repo.Path("test", "testdata", "decoys", tc.file+".yaml"))
			d := &approval.Decider{Reader: snap, Policies: embeddedEngine(t), Now: func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }}
			ns, name, _ := cut(tc.plan)
			plan := &v1alpha1.InstallPlan{}
			require.NoError(t, snap.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, plan))
			v, err := d.Judge(ctx, plan)
			require.NoError(t, err)
			assert.False(t, v.Approvable, "the plan is held: %s", v.WhyNot())
			assert.True(t, slices.ContainsFunc(v.Blockers, func(b approval.Blocker) bool {
				return b.Subscription == tc.holder && slices.Contains(b.Codes, tc.code)
			}), "%s holds the plan by %s: %s", tc.holder, tc.code, v.WhyNot())

			// Every Subscription's own decision judges the plan alike.
			var subs v1alpha1.SubscriptionList
			require.NoError(t, snap.List(ctx, &subs))
			for i := range subs.Items {
				dec, err := d.Decide(ctx, client.ObjectKeyFromObject(&subs.Items[i]))
				require.NoError(t, err)
				for _, pv := range dec.Plans {
					assert.False(t, pv.Approvable, "%s judges %s approvable", subs.Items[i].Name, pv.Name)
				}
			}
		})
	}
}

func TestADecoyDoesNotStandInForABundledPeer(t *testing.T) {
	snap := gated(t, repo.Path("test", "testdata", "decoys", "decoy-bundled.yaml"))
	d := &approval.Decider{Reader: snap, Policies: embeddedEngine(t), Now: func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }}
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: "team-c", Name: "etcd"})
	require.NoError(t, err)
	assert.Equal(t, []string{"InstallPlanIncludesBlockedOperator"}, approval.Standing(dec.Result.Decision))
	require.Len(t, dec.Peers, 1)
	assert.Equal(t, "team-c/prometheus", dec.Peers[0].Subscription.String(), "the held claimant speaks for the peer, not the decoy")
}

func TestAnEmptyCSVNameIsNeverApprovable(t *testing.T) {
	sub := subscription("no-status", "", manual)
	snap := world(t, sub, gate("no-status", enforce, true), plan("install-x", manual, false, waiting, ""))
	d := &approval.Decider{Reader: snap, Policies: &verdicts{results: map[string]engine.Decision{"no-status": allowed()}, peers: map[string][]any{}}}
	p := plan("install-x", manual, false, waiting, "")
	v, err := d.Judge(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, v.Approvable)
	assert.Equal(t, "plan lists a ClusterServiceVersion with an empty name", v.Ineligible)
}

// cut splits "namespace/name".
func cut(key string) (string, string, bool) { return strings.Cut(key, "/") }
