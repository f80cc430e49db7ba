package approval_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// bundledFirstInstall is what real OLM wrote for the first install of gamma, which requires
// delta: one plan with both CSVs and a step that creates delta's Subscription.
var bundledFirstInstall = repo.Path("test", "testdata", "olm", "bundled-first-install.yaml")

// judgeOnlyPlan judges the one InstallPlan of snap.
func judgeOnlyPlan(t *testing.T, snap *snapshot.Snapshot) approval.Verdict {
	t.Helper()
	d := &approval.Decider{Reader: snap, Policies: embeddedEngine(t), Now: func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) }}
	v, err := d.Judge(context.Background(), onlyPlan(t, snap))
	require.NoError(t, err)
	return v
}

// A new operator that the plan subscribes to, as OLM installs a required package, is no
// decoy: nothing installed can object, and the plan is approved.
func TestNewDependencyOfAPlanIsApprovable(t *testing.T) {
	v := judgeOnlyPlan(t, gated(t, bundledFirstInstall))
	assert.True(t, v.Approvable, v.WhyNot())
}

// The same plan is held when the dependency is not new: a Subscription already follows its
// package (it is then a claimant, judged as any). What a dependency replaces is judged in
// hostile_test.go.
func TestDependencyThatIsNotNewHoldsThePlan(t *testing.T) {
	t.Run("a Subscription follows its package", func(t *testing.T) {
		snap := gated(t, bundledFirstInstall)
		ns := onlyNamespace(t, snap)
		require.NoError(t, snap.Add(&v1alpha1.Subscription{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "delta"},
			Spec:       &v1alpha1.SubscriptionSpec{Package: "delta", Channel: "stable", CatalogSource: "real", CatalogSourceNamespace: "olm", InstallPlanApproval: v1alpha1.ApprovalAutomatic},
		}))
		v := judgeOnlyPlan(t, snap)
		assert.False(t, v.Approvable, "a claimant of the dependency's package decides for it")
	})
}

func onlyNamespace(t *testing.T, snap *snapshot.Snapshot) string {
	t.Helper()
	var subs v1alpha1.SubscriptionList
	require.NoError(t, snap.List(context.Background(), &subs))
	require.NotEmpty(t, subs.Items)
	return subs.Items[0].Namespace
}

// Every state real OLM wrote with a plan that must stay held (test/testdata/olm/*-held.yaml,
// make olm-fixtures) loads strictly, and no plan in it is approvable.
func TestRealOLMHeldStatesStayHeld(t *testing.T) {
	files, err := filepath.Glob(repo.Path("test", "testdata", "olm", "*-held.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no real-OLM fixture: run make olm-fixtures")
	ctx := context.Background()
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			snap := gated(t, file)
			d := &approval.Decider{Reader: snap, Policies: embeddedEngine(t), Now: func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) }}
			var plans v1alpha1.InstallPlanList
			require.NoError(t, snap.List(ctx, &plans))
			waiting := 0
			for i := range plans.Items {
				v, err := d.Judge(ctx, &plans.Items[i])
				require.NoError(t, err)
				if v.Ineligible == "" {
					waiting++
				}
				assert.False(t, v.Approvable, "%s: InstallPlan %s is approvable", file, plans.Items[i].Name)
			}
			assert.NotZero(t, waiting, "%s holds no plan waiting for approval", file)
		})
	}
}
