package evaluation_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// evaluator loads a snapshot of test/testdata/snapshots with the gates the manager creates,
// and evaluates it with the embedded policies.
func evaluator(t *testing.T, name string) (*evaluation.Evaluator, *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	snap, err := snapshot.Load(repo.Path("test", "testdata", "snapshots", name))
	require.NoError(t, err)
	require.NoError(t, evaluation.EnsureGates(ctx, snap))
	eng, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	var warn bytes.Buffer
	return evaluation.New(snap, eng, input.Config{GlobalCatalogNamespace: "olm"}, now, &warn), &warn
}

func TestReportOfAHeldUpgrade(t *testing.T) {
	e, warn := evaluator(t, "held.yaml")
	r, err := e.Report(context.Background())
	require.NoError(t, err)
	assert.Empty(t, warn.String())

	assert.Equal(t, "2026-11-20T12:00:00Z", r.Now)
	assert.Equal(t, e.Engine.Revision(), r.PolicyRevision)
	require.Len(t, r.Subscriptions, 1)
	s := r.Subscriptions[0]
	assert.Equal(t, []string{"team-a", "etcd", "etcd", "etcd.v0.9.2", "etcd.v0.9.4", "Manual", "Enforce"},
		[]string{s.Namespace, s.Name, s.Package, s.InstalledCSV, s.CurrentCSV, s.Approval, s.Mode})
	assert.False(t, s.Decision.Allowed)
	assert.Equal(t, []string{"OperatorNotUpgradeable"}, s.Decision.StandingCodes())
	assert.Empty(t, s.Decision.OverriddenCodes())
	require.NotNil(t, s.Status.Decision, "the gate status the manager would write records the decision")
	assert.False(t, s.Status.Decision.Allowed)
	assert.True(t, r.Denied())

	require.Len(t, r.InstallPlans, 1)
	assert.False(t, r.InstallPlans[0].Approvable)
	assert.Equal(t, "blocked: etcd.v0.9.4 (team-a/etcd: OperatorNotUpgradeable)", r.InstallPlans[0].WhyNot())

	require.Len(t, r.CatalogSources, 1)
	assert.Equal(t, evaluation.CatalogSource{Namespace: "olm", Name: "operatorhubio", Valid: true, Violations: []engine.Violation{},
		Healthy: "True", LastObservedState: "READY"}, r.CatalogSources[0])
	assert.False(t, r.InvalidCatalog())
}

func TestReportOfAnInvalidCatalog(t *testing.T) {
	e, _ := evaluator(t, "invalid-catalog.yaml")
	r, err := e.Report(context.Background())
	require.NoError(t, err)
	assert.True(t, r.InvalidCatalog())
	var invalid []string
	for _, c := range r.CatalogSources {
		if !c.Valid {
			invalid = append(invalid, c.Namespace+"/"+c.Name)
			require.NotEmpty(t, c.Violations, "an invalid catalog says why")
		}
	}
	assert.Equal(t, []string{"team-e/team-catalog"}, invalid)
}

func TestReportOfAnAllowedUpgrade(t *testing.T) {
	e, _ := evaluator(t, "allowed.yaml")
	r, err := e.Report(context.Background())
	require.NoError(t, err)
	assert.False(t, r.Denied())
	for _, v := range r.InstallPlans {
		assert.True(t, v.Approvable, "%s/%s: %s", v.Namespace, v.Name, v.WhyNot())
	}
}

// Each is the loop every whole-cluster report shares: one decision per Subscription of the
// namespace asked for, and the first error stops it.
func TestEachDecidesEverySubscriptionOfTheNamespace(t *testing.T) {
	e, _ := evaluator(t, "bundled.yaml")
	ctx := context.Background()
	var names []string
	require.NoError(t, e.Each(ctx, func(d *approval.Decision) error {
		names = append(names, d.Subscription.Namespace+"/"+d.Subscription.Name)
		require.NotNil(t, d.Result)
		return nil
	}))
	assert.Equal(t, []string{"team-c/etcd", "team-c/prometheus"}, names)

	e.Namespace = "elsewhere"
	names = nil
	require.NoError(t, e.Each(ctx, func(d *approval.Decision) error { names = append(names, d.Subscription.Name); return nil }))
	assert.Empty(t, names)

	e.Namespace = ""
	calls := 0
	err := e.Each(ctx, func(*approval.Decision) error { calls++; return assert.AnError })
	require.ErrorIs(t, err, assert.AnError)
	assert.Equal(t, 1, calls)
}

func TestEnsureGatesAddsTheGateTheManagerCreates(t *testing.T) {
	ctx := context.Background()
	snap, err := snapshot.Load(repo.Path("test", "testdata", "snapshots", "held.yaml"))
	require.NoError(t, err)
	var gates tollgatev1alpha1.UpgradeGateList
	require.NoError(t, snap.List(ctx, &gates))
	require.Empty(t, gates.Items)

	require.NoError(t, evaluation.EnsureGates(ctx, snap))
	require.NoError(t, evaluation.EnsureGates(ctx, snap), "a second call finds every gate")
	require.NoError(t, snap.List(ctx, &gates))
	require.Len(t, gates.Items, 1)
	assert.Equal(t, "team-a/etcd", gates.Items[0].Namespace+"/"+gates.Items[0].Name)
}

func TestPrintableNamesTheSubscriptions(t *testing.T) {
	e, _ := evaluator(t, "held.yaml")
	r, err := e.Report(context.Background())
	require.NoError(t, err)
	p := r.Printable("kubectl tollgate")
	var names, table bytes.Buffer
	require.NoError(t, printers.WriteNames(&names, p.Names()))
	assert.Equal(t, "subscription.operators.coreos.com/etcd\n", names.String())
	require.NoError(t, p.Human(&table, printers.TableOptions{}))
	assert.Contains(t, table.String(), "kubectl tollgate explain", "the table suggests commands as the reader runs them")
	assert.Same(t, r, p.Doc)
}
