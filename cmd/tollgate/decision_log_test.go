package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/demo"
)

// denyAllModule is a candidate policy that holds every upgrade.
const denyAllModule = `package tollgate.packs.denyall

deny contains {"code": "DenyAll", "message": "every upgrade is held"} if true
`

// TestDecisionLogReplays runs the manager on a real API server with a file decision log,
// holds an upgrade, lets it through and approves its plan, then replays the log: with the
// same policies every decision comes out the same; with a candidate policy that denies
// everything, they come out differently and eval exits with status 3.
func TestDecisionLogReplays(t *testing.T) {
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	world := &demo.World{Client: env.Client}
	oc, err := world.Install(ctx)
	require.NoError(t, err)
	plan, err := world.OfferUpgrade(ctx)
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-system"}}))

	path := filepath.Join(t.TempDir(), "decisions.log")
	stop := startLoggingManager(t, env, path)
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(t, func() bool {
		err := env.Client.Get(ctx, demo.SubscriptionKey, gate)
		return err == nil && gate.Status.Decision.BlockedBy == "OperatorNotUpgradeable"
	}, 30*time.Second, 100*time.Millisecond, "the upgrade is held")
	makeUpgradeable(t, env.Client, oc)
	require.Eventually(t, func() bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan)
		return err == nil && plan.Spec.Approved
	}, 30*time.Second, 100*time.Millisecond, "the plan is approved")
	stop()

	logged, err := decisionlog.ReadFile(path)
	require.NoError(t, err)
	var held, allowed, approvals int
	for _, l := range logged {
		ev := l.Event
		assert.Equal(t, "tollgate", ev.Labels["app"])
		assert.NotEmpty(t, ev.Labels["id"])
		assert.NotEmpty(t, ev.Bundles[decisionlog.PolicyBundle].Revision)
		require.NotNil(t, ev.Input, "logged with input")
		require.NotNil(t, l.Decision)
		switch {
		case ev.Path == decisionlog.PathApproval:
			approvals++
			res := ev.Result.(map[string]any)
			assert.Equal(t, map[string]any{"namespace": demo.Namespace, "name": demo.InstallPlan}, res["installPlan"])
			assert.True(t, l.Decision.Allowed)
		case l.Decision.Allowed:
			allowed++
		case l.Decision.BlockedBy() == "OperatorNotUpgradeable":
			held++
		}
	}
	assert.Equal(t, 1, approvals, "one approval")
	assert.GreaterOrEqual(t, held, 1, "the held decision")
	assert.GreaterOrEqual(t, allowed, 1, "the allowing decision")

	t.Run("replayed with the same policies, every decision is the same", func(t *testing.T) {
		stdout, stderr, err := run(t, "eval", "--replay", path, "-o", "json")
		require.NoError(t, err, stderr)
		var rep replay.Report
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		assert.Equal(t, len(logged), rep.Same)
		assert.Zero(t, rep.Different)
		assert.Zero(t, rep.NotReplayable)
		for _, e := range rep.Events {
			assert.Equal(t, demo.Namespace+"/"+demo.Subscription, e.Namespace+"/"+e.Name)
		}
	})

	t.Run("replayed with a candidate that denies everything, they differ: exit 3", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "denyall.rego"), []byte(denyAllModule), 0o644))
		stdout, _, err := run(t, "eval", "--replay", path, "--policy-dir", dir)
		require.Error(t, err)
		assert.Equal(t, exitDenied, exitCode(err))
		assert.Contains(t, stdout, "DIFFERENT")
		assert.Contains(t, stdout, "held: DenyAll")
		assert.Contains(t, stdout, "0 same")
		t.Log("\n" + stdout)
	})
}

// startLoggingManager runs the manager with a file decision log, and returns the function
// that stops it (and so flushes and closes the log).
func startLoggingManager(t *testing.T, env *controlplane.Env, path string) (stop func()) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 apis.NewScheme(),
		Cache:                  controllers.CacheOptions("tollgate-system"),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                 logr.Discard(),
	})
	require.NoError(t, err)
	sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = controllers.Setup(ctx, mgr, controllers.Options{
		Input:           input.Config{GlobalCatalogNamespace: demo.CatalogNamespace, DefaultMode: tollgatev1alpha1.ModeEnforce},
		PolicyNamespace: "tollgate-system",
		DecisionLog:     decisionlog.New(sink, decisionlog.Options{Log: logr.Discard()}),
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(stop)
	return stop
}

// makeUpgradeable plays the operator reporting Upgradeable=True, and OLM copying it.
func makeUpgradeable(t *testing.T, c client.Client, oc *operatorsv2.OperatorCondition) {
	ctx := context.Background()
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(oc), oc))
	ready := metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionTrue, Reason: "MigrationComplete", Message: "storage migrated", LastTransitionTime: metav1.Now()}
	oc.Spec.Conditions = []metav1.Condition{ready}
	require.NoError(t, c.Update(ctx, oc))
	ready.ObservedGeneration = oc.Generation
	oc.Status.Conditions = []metav1.Condition{ready}
	require.NoError(t, c.Status().Update(ctx, oc))
}
