package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/report/evaluation"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/demo"
)

// freezeModule is an admin's policy ConfigMap module: a pack rule that always denies.
const freezeModule = `# METADATA
# description: A change freeze set by the admins.
package tollgate.packs.clifreeze

# METADATA
# title: A change freeze is in effect
# custom:
#   code: ChangeFreeze
deny contains {"code": rego.metadata.rule().custom.code, "message": "a change freeze is in effect until 2026-12-01"} if true
`

// TestExplainAndSnapshotAgainstARealAPIServer builds a held upgrade on a real API server (no
// manager: the commands read what is there), explains it, snapshots it, and evaluates the
// snapshot offline to the same decision.
func TestExplainAndSnapshotAgainstARealAPIServer(t *testing.T) {
	env, kubeconfig := demoCluster(t)
	addFreezePolicy(t, env)

	t.Run("explain prints the decision, each denial's rule, facts and remedies", func(t *testing.T) {
		assertExplainsTheHeldUpgrade(t, kubeconfig)
	})

	t.Run("explain -o json and --trace", func(t *testing.T) {
		stdout, _, err := run(t, "explain", "--kubeconfig", kubeconfig, "-n", demo.Namespace, demo.Subscription, "-o", "json", "--trace")
		require.NoError(t, err)
		var rep explain.Report
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		assert.False(t, rep.Allowed)
		var codes []string
		for _, d := range rep.Denials {
			codes = append(codes, d.Code)
		}
		assert.Equal(t, []string{"ChangeFreeze", "OperatorNotUpgradeable"}, codes)
		assert.Equal(t, "configmap/freeze/freeze.rego", rep.Denials[0].File)
		require.Len(t, rep.InstallPlans, 1)
		assert.False(t, rep.InstallPlans[0].Approvable)
	})

	t.Run("explain of a Subscription that does not exist says how to list them", func(t *testing.T) {
		_, _, err := run(t, "explain", "--kubeconfig", kubeconfig, "-n", demo.Namespace, "nope")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no Subscription nope in namespace demo")
	})

	state := filepath.Join(t.TempDir(), "state.yaml")
	t.Run("snapshot writes the objects eval needs", func(t *testing.T) {
		stdout, stderr, err := run(t, "snapshot", "--kubeconfig", kubeconfig, "-n", demo.Namespace)
		require.NoError(t, err, stderr)
		for _, want := range []string{"snapshot of namespace demo from https://", "Subscriptions", "operands                 1"} {
			assert.Contains(t, stderr, want)
		}
		for _, want := range []string{"kind: Subscription", "kind: ClusterServiceVersion", "kind: InstallPlan", "kind: OperatorCondition",
			"kind: OperatorGroup", "kind: CatalogSource", "kind: EtcdCluster", "kind: ConfigMap", "name: freeze", "apiVersion: operators.coreos.com/v2"} {
			assert.Contains(t, stdout, want)
		}
		assert.NotContains(t, stdout, "managedFields")
		assert.NotContains(t, stdout, "name: unrelated", "only the policy ConfigMaps")
		assert.True(t, strings.HasPrefix(stdout, "# tollgate snapshot of namespace demo"))
		require.NoError(t, os.WriteFile(state, []byte(stdout), 0o644))
	})

	t.Run("eval of the snapshot reaches the same decision", func(t *testing.T) {
		assertSnapshotEvaluatesToTheSameDecision(t, state)
	})

	t.Run("snapshot -A -o json is a List", func(t *testing.T) {
		stdout, _, err := run(t, "snapshot", "--kubeconfig", kubeconfig, "-A", "-o", "json")
		require.NoError(t, err)
		var list struct {
			Kind  string           `json:"kind"`
			Items []map[string]any `json:"items"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &list))
		assert.Equal(t, "List", list.Kind)
		assert.Len(t, list.Items, 8, "catalog, group, subscription, CSV, plan, OperatorCondition, policy ConfigMap, operand")
		for _, it := range list.Items {
			assert.NotEmpty(t, it["apiVersion"])
			assert.NotEmpty(t, it["kind"])
		}
	})
}

// addFreezePolicy creates the tollgate-system namespace with a policy ConfigMap holding
// freezeModule, and a ConfigMap that is not policy.
func addFreezePolicy(t *testing.T, env *controlplane.Env) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-system"}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tollgate-system", Name: "freeze", Labels: map[string]string{policysource.Label: "rego"}},
		Data:       map[string]string{"freeze.rego": freezeModule},
	}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tollgate-system", Name: "unrelated"},
		Data:       map[string]string{"x": "not policy"},
	}))
}

// assertExplainsTheHeldUpgrade runs explain on the demo Subscription and checks its text.
func assertExplainsTheHeldUpgrade(t *testing.T, kubeconfig string) {
	stdout, stderr, err := run(t, "explain", "--kubeconfig", kubeconfig, "-n", demo.Namespace, demo.Subscription)
	require.NoError(t, err, stderr)
	assert.Empty(t, stderr)
	for _, want := range []string{
		"Subscription demo/etcd",
		"installed  etcd.v0.9.2 (Succeeded)",
		"Decision: HELD by ChangeFreeze, OperatorNotUpgradeable (2 denials stand)",
		"rule:     configmap/freeze/freeze.rego:",
		"rule:     upgrade/upgrade.rego:",
		"OperatorCondition etcd.v0.9.2: Upgradeable=False since ",
		": migrating storage (reason Migrating)",
		"the operator reports Upgradeable=True (or removes the condition) in OperatorCondition demo/etcd.v0.9.2",
		"kubectl edit operatorcondition -n demo etcd.v0.9.2",
		`kubectl patch upgradegate -n demo etcd --type merge -p '{"spec":{"overrides":[{"code":"ChangeFreeze","reason":"<why this upgrade is safe anyway>"}]}}'`,
		"install-etcd-v0-9-4  etcd.v0.9.4  no       blocked: etcd.v0.9.4 (demo/etcd: ChangeFreeze, OperatorNotUpgradeable)",
		"There is no UpgradeGate demo/etcd yet",
		"Available    True",
		"InstallPlanAwaitingManualApproval  True",
	} {
		assert.Contains(t, oneLine(stdout), oneLine(want))
	}
}

// assertSnapshotEvaluatesToTheSameDecision evaluates the snapshot file state offline, as JSON
// and with --fail-on-deny.
func assertSnapshotEvaluatesToTheSameDecision(t *testing.T, state string) {
	stdout, stderr, err := run(t, "eval", "--snapshot", state, "-o", "json")
	require.NoError(t, err)
	assert.Empty(t, stderr, "the snapshot loads without problems")
	var rep evaluation.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Subscriptions, 1)
	sub := rep.Subscriptions[0]
	assert.Equal(t, "etcd.v0.9.4", sub.CurrentCSV)
	assert.False(t, sub.Decision.Allowed)
	require.Len(t, sub.Decision.Denials, 2)
	assert.Equal(t, "ChangeFreeze", sub.Decision.Denials[0].Code, "the policy ConfigMap travels with the snapshot")
	assert.Equal(t, "OperatorNotUpgradeable", sub.Decision.Denials[1].Code)
	assert.Equal(t, "True", string(sub.Health[0].Status), "the operand travels with the snapshot: %v", sub.Health)
	require.Len(t, rep.InstallPlans, 1)
	assert.False(t, rep.InstallPlans[0].Approvable)
	require.Len(t, rep.CatalogSources, 1)
	assert.Equal(t, "True", rep.CatalogSources[0].Healthy)

	_, _, err = run(t, "eval", "--snapshot", state, "--fail-on-deny")
	assert.Equal(t, exitDenied, exitCode(err))
}

// oneLine collapses whitespace, so text wrapped for a person can be matched.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// demoCluster starts a control plane holding the demo's held upgrade (no manager: the
// commands read what is there) and returns it with a kubeconfig file for it.
func demoCluster(t *testing.T) (*controlplane.Env, string) {
	t.Helper()
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, env.Kubeconfig(kubeconfig))
	world := &demo.World{Client: env.Client}
	_, err = world.Install(context.Background())
	require.NoError(t, err)
	_, err = world.OfferUpgrade(context.Background())
	require.NoError(t, err)
	return env, kubeconfig
}
