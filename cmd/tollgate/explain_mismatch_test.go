package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
)

// mismatchSnapshot is held.yaml (etcd in team-a, held by OperatorNotUpgradeable) with the
// gate the manager wrote (its decision at policy revision rev) and, when status is not empty,
// the policy ConfigMap "freeze" (a change freeze) whose status annotation is status.
func mismatchSnapshot(t *testing.T, rev, status string) (dir string, freeze corev1.ConfigMap) {
	t.Helper()
	held, err := os.ReadFile(fixture("held.yaml"))
	require.NoError(t, err)
	freeze = corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: policysource.DefaultNamespace, Name: "freeze", Labels: map[string]string{policysource.Label: policysource.KindRego}},
		Data:       map[string]string{"freeze.rego": freezeModule},
	}
	gate := fmt.Sprintf(`
---
apiVersion: tollgate.dev/v1alpha1
kind: UpgradeGate
metadata: {name: etcd, namespace: team-a}
spec: {}
status:
  decision:
    allowed: false
    blockedBy: OperatorNotUpgradeable
    policyRevision: %s
    evaluatedAt: "2026-11-20T11:00:00Z"
`, rev)
	state := append(held, gate...)
	if status != "" {
		freeze.Annotations = map[string]string{policysource.StatusAnnotation: status}
		doc, err := yaml.Marshal(freeze)
		require.NoError(t, err)
		state = append(append(state, "\n---\n"...), doc...)
	}
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.yaml"), state, 0o644))
	return dir, freeze
}

func explainJSON(t *testing.T, dir string) explain.Report {
	t.Helper()
	stdout, _, err := run(t, "explain", "--snapshot", dir, "--now", now, "-n", "team-a", "etcd", "-o", "json")
	require.NoError(t, err)
	var rep explain.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	return rep
}

func TestExplainSaysWhenItCannotReproduceTheManagersPolicySet(t *testing.T) {
	t.Run("a ConfigMap the manager keeps at its previous good version: the gate's decision, and the difference", func(t *testing.T) {
		status := `{"status":"error","serving":"previous","servingDigest":"0123456789ab","errors":[{"file":"configmap/freeze/freeze.rego","row":8,"col":1,"message":"rego_type_error: conflicting rules"}]}`
		dir, freeze := mismatchSnapshot(t, "aaaaaaaaaaaa", status)
		digest := policysource.Digest(freeze)

		stdout, _, err := run(t, "explain", "--snapshot", dir, "--now", now, "-n", "team-a", "etcd")
		require.NoError(t, err)
		text := oneLine(stdout)
		assert.Contains(t, text, "Decision: HELD by OperatorNotUpgradeable (the manager's, as recorded in the UpgradeGate at 2026-11-20T11:00:00Z with policy revision aaaaaaaaaaaa)")
		assert.Contains(t, text, "explain's own evaluation, with a different policy set")
		assert.Contains(t, text, "HELD by ChangeFreeze, OperatorNotUpgradeable", "explain's own evaluation is shown, labelled as its own")
		assert.Contains(t, text, "explain cannot reproduce the policy set the manager runs")
		assert.Contains(t, text, "ConfigMap tollgate-system/freeze: the manager serves its previous good version (digest 0123456789ab), explain read the current one (digest "+digest+"), which the manager rejected: ")
		assert.Contains(t, text, "rego_type_error: conflicting rules")
		assert.NotContains(t, stdout, "the manager's last decision:", "the manager's decision is the headline, not repeated")

		rep := explainJSON(t, dir)
		require.NotNil(t, rep.PolicyMismatch)
		assert.Equal(t, explain.DecisionOfManager, rep.PolicyMismatch.Decision)
		assert.Equal(t, "aaaaaaaaaaaa", rep.PolicyMismatch.ManagerRevision)
		assert.Equal(t, rep.PolicyRevision, rep.PolicyMismatch.ExplainRevision)
		require.Len(t, rep.PolicyMismatch.Differences, 1)
		d := rep.PolicyMismatch.Differences[0]
		assert.Equal(t, "ConfigMap tollgate-system/freeze", d.Source)
		assert.Equal(t, "0123456789ab", d.Manager)
		assert.Equal(t, digest, d.Explain)
		require.NotNil(t, rep.Stored)
		assert.False(t, rep.Stored.Allowed)
	})

	t.Run("everything matches: no notice, explain's decision", func(t *testing.T) {
		_, freeze := mismatchSnapshot(t, "", "")
		status := fmt.Sprintf(`{"status":"ok","serving":"current","servingDigest":%q}`, policysource.Digest(freeze))
		dir, _ := mismatchSnapshot(t, "placeholder", status)
		rev := explainJSON(t, dir).PolicyRevision
		dir, _ = mismatchSnapshot(t, rev, status) // the gate decided with the same set

		rep := explainJSON(t, dir)
		assert.Nil(t, rep.PolicyMismatch)
		stdout, _, err := run(t, "explain", "--snapshot", dir, "--now", now, "-n", "team-a", "etcd", "-o", "json")
		require.NoError(t, err)
		assert.NotContains(t, stdout, "policyMismatch")

		stdout, _, err = run(t, "explain", "--snapshot", dir, "--now", now, "-n", "team-a", "etcd")
		require.NoError(t, err)
		assert.Contains(t, stdout, "Decision: HELD by ChangeFreeze, OperatorNotUpgradeable (2 denials stand)\n")
		assert.Contains(t, stdout, "the manager's last decision: held by OperatorNotUpgradeable (at 2026-11-20T11:00:00Z, policy revision "+rev+")")
		assert.NotContains(t, stdout, "Note: explain")
	})

	t.Run("a different revision no ConfigMap accounts for: both decisions, and a hint at --bundle", func(t *testing.T) {
		dir, _ := mismatchSnapshot(t, "bbbbbbbbbbbb", "")
		rep := explainJSON(t, dir)
		require.NotNil(t, rep.PolicyMismatch)
		assert.Equal(t, explain.DecisionOfManager, rep.PolicyMismatch.Decision)
		require.Len(t, rep.PolicyMismatch.Differences, 1)
		d := rep.PolicyMismatch.Differences[0]
		assert.Equal(t, explain.PolicyDifference{Source: "policy revision", Manager: "bbbbbbbbbbbb", Explain: rep.PolicyRevision, Message: d.Message}, d)
		assert.Contains(t, d.Message, "explain's policy revision "+rep.PolicyRevision+" differs from the manager's bbbbbbbbbbbb")
		assert.Contains(t, d.Message, "pass the same --bundle")

		stdout, _, err := run(t, "explain", "--snapshot", dir, "--now", now, "-n", "team-a", "etcd")
		require.NoError(t, err)
		assert.Contains(t, stdout, "Decision: HELD by OperatorNotUpgradeable (the manager's, as recorded")
		assert.Contains(t, stdout, "explain's own evaluation, with a different policy set (revision "+rep.PolicyRevision)
		assert.Equal(t, 1, strings.Count(stdout, "differs from the manager's"), "one note, not the old revision notice too")
	})

	t.Run("with --policy-dir explain leads with its own evaluation, labelled as such", func(t *testing.T) {
		dir, _ := mismatchSnapshot(t, "bbbbbbbbbbbb", "")
		stdout, _, err := run(t, "explain", "--snapshot", dir, "--policy-dir", freezeDir(t), "--now", now, "-n", "team-a", "etcd")
		require.NoError(t, err)
		assert.Contains(t, stdout, "(explain's evaluation, not necessarily the manager's: the policy sets differ)")
		assert.Contains(t, stdout, "the manager's last decision: held by OperatorNotUpgradeable")
		assert.Contains(t, oneLine(stdout), "adds modules the manager does not have")
	})
}
