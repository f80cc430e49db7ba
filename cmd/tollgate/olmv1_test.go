package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// eval on the states real OLM v1 and Tollgate's manager reached in test/olmv1: the pin each
// ClusterExtension would get, and why its highest successor holds.
func TestEvalOLMv1Golden(t *testing.T) {
	for _, name := range []string{"ungated-1.0.0", "freeze-held", "operand-degraded-held", "catalog-not-serving-held", "deprecated-held"} {
		t.Run(name, func(t *testing.T) {
			snap := repo.Path("test", "testdata", "olmv1", "snapshots", name+".yaml")
			for _, format := range []string{"json", "table"} {
				stdout, stderr, err := run(t, "eval", "--snapshot", snap, "--now", now, "-o", format)
				require.NoError(t, err)
				assert.Empty(t, stderr)
				ext := ".json"
				if format == "table" {
					ext = ".txt"
				}
				golden(t, filepath.Join("olmv1", "eval-"+name+ext), stdout)
			}
		})
	}
}

// --fail-on-deny: a held successor is a denial; an extension whose successor is allowed is not.
func TestEvalOLMv1FailOnDeny(t *testing.T) {
	dir := repo.Path("test", "testdata", "olmv1", "snapshots")
	_, _, err := run(t, "eval", "--snapshot", filepath.Join(dir, "deprecated-held.yaml"), "--now", now, "--fail-on-deny")
	require.Error(t, err)
	_, _, err = run(t, "eval", "--snapshot", filepath.Join(dir, "ungated-1.0.0.yaml"), "--now", now, "--fail-on-deny")
	require.NoError(t, err)
}

// What eval decides on each state is what the manager had written into the ExtensionGate's
// status there: the same candidates, decision and health, on the same catalog content.
func TestEvalOLMv1AgreesWithTheManager(t *testing.T) {
	for _, name := range []string{"freeze-held", "operand-degraded-held", "catalog-not-serving-held", "deprecated-held"} {
		t.Run(name, func(t *testing.T) {
			path := repo.Path("test", "testdata", "olmv1", "snapshots", name+".yaml")
			snap, err := snapshot.Load(path)
			require.NoError(t, err)
			gate := &tollgatev1alpha1.ExtensionGate{}
			require.NoError(t, snap.Get(context.Background(), client.ObjectKey{Name: "tollgate-demo"}, gate))
			stdout, _, err := run(t, "eval", "--snapshot", path, "-o", "json")
			require.NoError(t, err)
			var report struct {
				Extensions []evaluation.Extension `json:"extensions"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &report))
			require.Len(t, report.Extensions, 1)
			got, want := report.Extensions[0].Status, gate.Status
			assert.Equal(t, want.Installed, got.Installed)
			assert.Equal(t, want.Pin, got.Pin)
			assert.Equal(t, want.Catalogs, got.Catalogs)
			assert.Equal(t, want.Candidates, got.Candidates)
			assert.Equal(t, want.Decision.Allowed, got.Decision.Allowed)
			assert.Equal(t, want.Decision.Denials, got.Decision.Denials)
			assert.Equal(t, conditionStates(want.Health), conditionStates(got.Health))
		})
	}
}

// conditionStates are the conditions without their times.
func conditionStates(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	return out
}

// explain clusterextension/NAME on the states of test/olmv1: the successors, the decision on
// the highest, each denial's rule, facts and remedies (an override as the ExtensionGate's patch).
func TestExplainOLMv1Golden(t *testing.T) {
	for _, name := range []string{"freeze-held", "operand-degraded-held", "catalog-not-serving-held", "deprecated-held", "ungated-1.0.0"} {
		t.Run(name, func(t *testing.T) {
			snap := repo.Path("test", "testdata", "olmv1", "snapshots", name+".yaml")
			stdout, stderr, err := run(t, "explain", "--snapshot", snap, "--now", now, "clusterextension/tollgate-demo")
			require.NoError(t, err)
			assert.Empty(t, stderr)
			golden(t, filepath.Join("olmv1", "explain-"+name+".txt"), stdout)
		})
	}
	snap := repo.Path("test", "testdata", "olmv1", "snapshots", "deprecated-held.yaml")
	stdout, _, err := run(t, "explain", "--snapshot", snap, "--now", now, "clusterextension/tollgate-demo", "-o", "json")
	require.NoError(t, err)
	golden(t, filepath.Join("olmv1", "explain-deprecated-held.json"), stdout)
}

// A ClusterExtension is explained from a snapshot, without a namespace; other kinds are refused.
func TestExplainOLMv1Refusals(t *testing.T) {
	snap := repo.Path("test", "testdata", "olmv1", "snapshots", "deprecated-held.yaml")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--snapshot", snap, "-n", "x", "clusterextension/tollgate-demo"}, "cluster-scoped"},
		{[]string{"explain", "--snapshot", snap, "deployment/x"}, "clusterextension/NAME"},
		{[]string{"explain", "--snapshot", snap, "clusterextension/missing"}, "read ClusterExtension missing"},
	} {
		_, _, err := run(t, tt.args...)
		require.ErrorContains(t, err, tt.want, tt.args)
	}
}

// policy diff covers ClusterExtensions: a freeze the candidate adds newly blocks the upgrade
// of the extension whose successor the policies in force allow.
func TestPolicyDiffOLMv1(t *testing.T) {
	dir := t.TempDir()
	periods := filepath.Join(dir, "periods.yaml")
	require.NoError(t, os.WriteFile(periods, []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: freeze-periods, namespace: tollgate-system, labels: {tollgate.dev/policy: data}}
data:
  freeze.json: '{"packs": {"freeze": {"periods": [{"start": "2026-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z", "reason": "audit"}]}}}'
`), 0o600))
	snap := repo.Path("test", "testdata", "olmv1", "snapshots", "ungated-1.0.0.yaml")
	stdout, _, err := run(t, "policy", "diff", "--snapshot", snap, "--now", now, "--bundle", repo.Path("bundles", "packs", "freeze"), "--configmap", periods, "-o", "json")
	require.NoError(t, err)
	var report struct {
		Summary struct{ NewlyBlocked int } `json:"summary"`
		Changes []struct {
			Kind, Name string
			After      struct{ Codes []string } `json:"after"`
		} `json:"changes"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report))
	require.Equal(t, 1, report.Summary.NewlyBlocked, stdout)
	require.Len(t, report.Changes, 1)
	assert.Equal(t, "ClusterExtension", report.Changes[0].Kind)
	assert.Equal(t, "tollgate-demo", report.Changes[0].Name)
	assert.Equal(t, []string{"ChangeFreeze"}, report.Changes[0].After.Codes)
}
