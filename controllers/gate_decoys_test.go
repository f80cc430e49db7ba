package controllers_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
)

// TestAPlanListingAnEmptyCSVNameIsNeverApproved: a plan lists redis.v1.0.0, which redis
// claims and may install, and an empty CSV name, beside a Subscription that has no status yet
// (whose empty currentCSV seemed to claim the empty name). The manager holds redis, whose plan
// installs a CSV no Subscription claims, and never approves the plan. (The other decoy states run through the manager in the
// agreement test of cmd/tollgate, on test/testdata/decoys.)
func TestAPlanListingAnEmptyCSVNameIsNeverApproved(t *testing.T) {
	env, ctx := apiServer(t)
	plan := firstInstallWaiting(t, ctx, env.Client)
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan))
	plan.Spec.ClusterServiceVersionNames = append(plan.Spec.ClusterServiceVersionNames, "")
	require.NoError(t, env.Client.Update(ctx, plan))
	fresh := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: plan.Namespace, Name: "fresh"},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "catalog", CatalogSourceNamespace: plan.Namespace, Package: "other", Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual}}
	require.NoError(t, env.Client.Create(ctx, fresh))
	w := &writes{}
	startWith(t, ctx, env.Config, w, controllers.Options{})

	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && gate.Status.Decision.EvaluatedAt != nil
	}, 20*time.Second, 10*time.Millisecond, "redis is decided")
	require.False(t, gate.Status.Decision.Allowed, "the plan's unnamed CSV is a peer no Subscription claims")
	require.Equal(t, tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator, gate.Status.Decision.BlockedBy)
	require.Never(t, func() bool {
		got := &v1alpha1.InstallPlan{}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got) == nil && got.Spec.Approved
	}, 3*time.Second, 50*time.Millisecond, "a plan that lists an empty CSV name is never approved; writes: %q", w.entries())
}
