package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/report/evaluation"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldOperatorCondition is the document of held.yaml that holds the upgrade.
const heldOperatorCondition = `apiVersion: operators.coreos.com/v2
kind: OperatorCondition
metadata:
  name: etcd.v0.9.2
  namespace: team-a
  generation: 1
`

// hostileHeld is held.yaml with its OperatorCondition document rewritten by edit.
func hostileHeld(t *testing.T, edit func(doc string) string) string {
	t.Helper()
	b, err := os.ReadFile(fixture("held.yaml"))
	require.NoError(t, err)
	held := string(b)
	require.Equal(t, 1, strings.Count(held, "---\n"+heldOperatorCondition), "held.yaml changed: update this test")
	start := strings.Index(held, "---\n"+heldOperatorCondition)
	end := start + 4 + strings.Index(held[start+4:], "---\n")
	return held[:start] + edit(held[start:end]) + held[end:]
}

func replace(old, new string) func(string) string {
	return func(doc string) string {
		if !strings.Contains(doc, old) {
			panic("no " + old + " in the OperatorCondition")
		}
		return strings.Replace(doc, old, new, 1)
	}
}

// A snapshot that used to lose the OperatorCondition holding the upgrade (and so approved the
// plan, with exit 0 under --fail-on-deny) now fails: with an error when it cannot be read
// whole, with the denial when it is read right.
func TestEvalOfAHostileSnapshotNeverApprovesTheHeldUpgrade(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		edit     func(string) string
		exit     int
		want     string
	}{
		{"generation .nan", replace("generation: 1", "generation: .nan"), 1, "metadata.generation: \".nan\" is not a number JSON can carry"},
		{"generation .inf", replace("generation: 1", "generation: .inf"), 1, "metadata.generation: \".inf\" is not a number JSON can carry"},
		{"an integer name", replace("name: etcd.v0.9.2", "name: 5"), 1, "metadata.name: must be a string, not an integer (5)"},
		{"no apiVersion", replace("apiVersion: operators.coreos.com/v2\n", ""), 1, "apiVersion: missing"},
		{"no kind", replace("kind: OperatorCondition\n", ""), 1, "kind: missing"},
		{"a lowercase kind", replace("kind: OperatorCondition", "kind: operatorcondition"), 1, `kind: "operatorcondition" is spelled "OperatorCondition"`},
		{"an unquoted False", replace(`status: "False"`, "status: False"), 1, "spec.conditions[0].status: must be a string, not a boolean (false)"},
		{"a duplicate key", replace("  generation: 1", "  generation: 1\n  name: etcd.v0.9.1"), 1, "metadata.name: duplicate key"},
		{"a second copy that allows", func(doc string) string {
			return doc + strings.ReplaceAll(doc, `status: "False"`, `status: "True"`)
		}, 1, "OperatorCondition team-a/etcd.v0.9.2 is also in"},
		{"an OperatorCondition of v1 is read", replace("operators.coreos.com/v2", "operators.coreos.com/v1"), exitDenied, ""},
		{"a --- !!map separator keeps the document", replace("---\n", "--- !!map\n"), exitDenied, ""},
		{"an AllowList does not inject a policy ConfigMap", func(doc string) string {
			return doc + `---
apiVersion: policy.example.com/v1
kind: AllowList
metadata: {name: allow, namespace: team-a}
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: disable, namespace: tollgate-system, labels: {tollgate.dev/policy: data}}
  data: {config.yaml: "disabledCodes: [OperatorNotUpgradeable]"}
`
		}, exitDenied, ""},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.yaml")
			require.NoError(t, os.WriteFile(state, []byte(hostileHeld(t, tt.edit)), 0o600))
			stdout, _, err := run(t, "eval", "--snapshot", state, "--now", now, "--fail-on-deny", "-o", "json")
			require.Error(t, err)
			assert.Equal(t, tt.exit, exitCode(err), "%v", err)
			assert.NotContains(t, stdout, `"approve": true`)
			if tt.want != "" {
				assert.Regexp(t, `state\.yaml: document \d+ \(line \d+\)`, err.Error(), "the file, document and line")
				assert.Contains(t, err.Error(), tt.want)
				assert.Empty(t, stdout)
				_, _, err = run(t, "explain", "--snapshot", state, "--now", now, "-n", "team-a", "etcd")
				assert.ErrorContains(t, err, tt.want, "explain refuses it too")
				return
			}
			assert.Contains(t, stdout, `"code": "OperatorNotUpgradeable"`)
		})
	}
}

func TestEvalReadsStandardInput(t *testing.T) {
	f, err := os.Open(fixture("held.yaml"))
	require.NoError(t, err)
	defer f.Close()
	saved := os.Stdin
	t.Cleanup(func() { os.Stdin = saved })
	os.Stdin = f

	stdout, _, err := run(t, "eval", "--snapshot", "-", "--now", now, "--fail-on-deny", "-o", "json")
	assert.Equal(t, exitDenied, exitCode(err), "%v", err)
	assert.Contains(t, stdout, `"code": "OperatorNotUpgradeable"`)
}

func TestEvalOfASnapshotWithoutSubscriptionFails(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.yaml")
	require.NoError(t, os.WriteFile(state, []byte(heldOperatorCondition), 0o600))
	stdout, _, err := run(t, "eval", "--snapshot", state, "--now", now)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, err.Error(), "no Subscription, CatalogSource (operators.coreos.com/v1alpha1) nor ClusterExtension (olm.operatorframework.io/v1) in "+state+": nothing to decide or check")
	assert.Empty(t, stdout)
}

// A snapshot of CatalogSources alone checks them, as an admin does before applying one: the
// table lists each with its validity and the fields at fault, and --fail-on-invalid-catalog
// exits 3 when one is invalid.
func TestEvalChecksASnapshotOfCatalogSourcesAlone(t *testing.T) {
	catalogs := filepath.Join("testdata", "catalogs-only.yaml")
	stdout, _, err := run(t, "eval", "--snapshot", catalogs, "--now", now)
	require.NoError(t, err)
	assert.Contains(t, stdout, "CATALOG SOURCES (2)")
	assert.NotContains(t, stdout, "SUBSCRIPTIONS")
	assert.Regexp(t, `olm +operatorhubio +True \(READY\) +yes`, stdout)
	assert.Regexp(t, `team-e +team-catalog +True \(READY\) +no +spec: spec.catalogImageSource, spec.catalogServiceSource are set together`, stdout)

	stdout, _, err = run(t, "eval", "--snapshot", catalogs, "--now", now, "-o", "json")
	require.NoError(t, err, "without --fail-on-invalid-catalog an invalid catalog is not an error")
	var rep evaluation.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.CatalogSources, 2)
	assert.False(t, rep.CatalogSources[1].Valid)

	_, _, err = run(t, "eval", "--snapshot", catalogs, "--now", now, "--fail-on-invalid-catalog")
	assert.Equal(t, exitDenied, exitCode(err), "%v", err)
	_, _, err = run(t, "eval", "--snapshot", fixture("allowed.yaml"), "--now", now, "--fail-on-invalid-catalog")
	require.NoError(t, err, "every catalog of allowed.yaml is valid")
}

func TestEvalRefusesADevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, _, err := run(t, "eval", "--snapshot", "/dev/zero")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/dev/zero is not a regular file")
}
