package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/test/framework/repo"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// now is the clock of every golden run, so ages and timestamps are stable.
const now = "2026-11-20T12:00:00Z"

var snapshots = repo.Path("test", "testdata", "snapshots")

func fixture(name string) string { return filepath.Join(snapshots, name) }

// run executes the root command in-process, as a user would run the binary.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

var (
	regoRow  = regexp.MustCompile(`\.rego:\d+`)
	revision string
)

// normalize hides what changes whenever any embedded policy is edited (the policy revision
// and the rows of rules), so the golden files follow the CLI, not every policy edit.
func normalize(t *testing.T, s string) string {
	t.Helper()
	if revision == "" {
		e, err := engine.New(context.Background(), engine.Options{})
		require.NoError(t, err)
		revision = e.Revision()
	}
	s = strings.ReplaceAll(s, revision, "<revision>")
	return regoRow.ReplaceAllString(s, ".rego:<row>")
}

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = normalize(t, got)
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file; create it with: go test ./cmd/tollgate -run %s -update", t.Name())
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got); if the change is intended: go test ./cmd/tollgate -run %s -update\n%s", path, t.Name(), diff)
	}
}

func TestEvalGolden(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		snapshot string
		golden   string
	}{
		{"an upgrade held because the operator reports Upgradeable=False", "held.yaml", "eval-held"},
		{"an upgrade the operator allows is approved", "allowed.yaml", "eval-allowed"},
		{"a plan bundling an allowed and a blocked operator waits for both", "bundled.yaml", "eval-bundled"},
		{"an Automatic Subscription is decided but never approved", "automatic.yaml", "eval-automatic"},
		{"an invalid source CatalogSource holds the upgrade and is reported", "invalid-catalog.yaml", "eval-invalid-catalog"},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			for _, format := range []string{"json", "table"} {
				stdout, stderr, err := run(t, "eval", "--snapshot", fixture(tt.snapshot), "--now", now, "-o", format)
				require.NoError(t, err)
				assert.Empty(t, stderr)
				ext := ".json"
				if format == "table" {
					ext = ".txt"
				}
				golden(t, tt.golden+ext, stdout)
			}
		})
	}
}

func TestEvalOfAFolderWithAMalformedDocumentFailsAndNamesIt(t *testing.T) {
	stdout, stderr, err := run(t, "eval", "--snapshot", snapshots, "--now", now)
	require.NoError(t, err, "the scenario files share identical copies of the global catalog: one object")
	assert.Empty(t, stderr)
	golden(t, "eval-all.txt", stdout)

	malformed := repo.Path("test", "testdata", "hostile", "malformed")
	stdout, _, err = run(t, "eval", "--snapshot", snapshots, "--snapshot", malformed, "--now", now, "--fail-on-deny")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err), "an error, not a decision")
	assert.Empty(t, stdout, "nothing is decided on part of a snapshot")
	assert.Contains(t, err.Error(), filepath.Join("malformed", "state.yaml")+": document 2 (line 25): mapping values are not allowed in this context")
	assert.Contains(t, err.Error(), "fix these documents")
}

func TestEvalJSONShape(t *testing.T) {
	stdout, _, err := run(t, "eval", "--snapshot", snapshots, "--now", now, "-o", "json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	keysOf := func(v any) []string {
		var keys []string
		for k := range v.(map[string]any) {
			keys = append(keys, k)
		}
		return keys
	}
	assert.ElementsMatch(t, []string{"now", "policyRevision", "subscriptions", "installPlans", "catalogSources"}, keysOf(doc))
	sub := doc["subscriptions"].([]any)[0]
	assert.ElementsMatch(t, []string{"namespace", "name", "package", "installedCSV", "currentCSV", "approval", "mode", "state", "upToDate", "decision", "conditions", "health", "status"}, keysOf(sub))
	decision := sub.(map[string]any)["decision"]
	assert.ElementsMatch(t, []string{"allowed", "denials"}, keysOf(decision))
	assert.ElementsMatch(t, []string{"code", "message", "source"}, keysOf(decision.(map[string]any)["denials"].([]any)[0]))
	assert.ElementsMatch(t, []string{"type", "status", "reason", "message"}, keysOf(sub.(map[string]any)["conditions"].([]any)[0]))
	assert.ElementsMatch(t, []string{"namespace", "name", "approve", "csvs", "blockers", "ineligible"}, keysOf(doc["installPlans"].([]any)[3]), "the Automatic plan says why it is not Tollgate's")
	blocked := doc["installPlans"].([]any)[0].(map[string]any)["blockers"].([]any)[0]
	assert.ElementsMatch(t, []string{"csv", "subscription", "reason", "codes"}, keysOf(blocked))
	assert.ElementsMatch(t, []string{"namespace", "name", "valid", "violations", "healthy", "lastObservedState"}, keysOf(doc["catalogSources"].([]any)[0]))

	yamlOut, _, err := run(t, "eval", "--snapshot", fixture("held.yaml"), "--now", now, "-o", "yaml")
	require.NoError(t, err)
	assert.Contains(t, yamlOut, "subscriptions:\n- ")
	assert.Contains(t, yamlOut, "code: OperatorNotUpgradeable")
}

func TestExplainGolden(t *testing.T) {
	for _, tt := range []struct {
		scenario  string
		snapshot  string
		namespace string
		name      string
		golden    string
	}{
		{"a held upgrade names the OperatorCondition and the override patch", "held.yaml", "team-a", "etcd", "explain-held.txt"},
		{"an allowed upgrade says the plan is approved", "allowed.yaml", "team-b", "etcd", "explain-allowed.txt"},
		{"the allowed operator of a bundled plan points at the blocked one", "bundled.yaml", "team-c", "etcd", "explain-bundled-etcd.txt"},
		{"the blocked operator of a bundled plan", "bundled.yaml", "team-c", "prometheus", "explain-bundled-prometheus.txt"},
		{"an Automatic Subscription says Tollgate cannot hold it, and how to fix that", "automatic.yaml", "team-d", "etcd", "explain-automatic.txt"},
		{"an invalid source catalog names the fields", "invalid-catalog.yaml", "team-e", "etcd", "explain-invalid-catalog.txt"},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			stdout, stderr, err := run(t, "explain", "--snapshot", fixture(tt.snapshot), "--now", now, "-n", tt.namespace, tt.name)
			require.NoError(t, err)
			assert.Empty(t, stderr)
			golden(t, tt.golden, stdout)
		})
	}
}

func TestExplainJSONAndTrace(t *testing.T) {
	stdout, _, err := run(t, "explain", "--snapshot", fixture("held.yaml"), "--now", now, "-n", "team-a", "etcd", "-o", "json")
	require.NoError(t, err)
	var rep explain.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Denials, 1)
	d := rep.Denials[0]
	assert.Equal(t, "OperatorNotUpgradeable", d.Code)
	assert.Equal(t, "upgrade/upgrade.rego", d.File)
	assert.Positive(t, d.Row)
	require.Len(t, d.Facts, 1)
	assert.Contains(t, d.Facts[0], "OperatorCondition etcd.v0.9.2: Upgradeable=False since 2026-11-20T10:00:00Z: migrating storage (reason Migrating)")
	assert.Equal(t, "kubectl edit operatorcondition -n team-a etcd.v0.9.2", d.Lift[len(d.Lift)-1].Command,
		"OLM checks Upgradeable itself: the remedy that lifts both holds is the OperatorCondition's override, not a gate waiver")
	assert.Nil(t, rep.Notes, "notes only with --trace")

	traced, _, err := run(t, "explain", "--snapshot", fixture("held.yaml"), "--now", now, "-n", "team-a", "etcd", "--trace")
	require.NoError(t, err)
	plain, _, err := run(t, "explain", "--snapshot", fixture("held.yaml"), "--now", now, "-n", "team-a", "etcd")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(traced, plain), "--trace only adds to the explanation")
}

func TestExplainKeepsTheOtherOverridesInThePatch(t *testing.T) {
	dir := t.TempDir()
	held, err := os.ReadFile(fixture("held.yaml"))
	require.NoError(t, err)
	gate := `
---
apiVersion: tollgate.dev/v1alpha1
kind: UpgradeGate
metadata:
  name: etcd
  namespace: team-a
spec:
  overrides:
  - code: OperatorDegraded
    reason: known flaky probe
    expires: "2026-12-01T00:00:00Z"
  - code: TestFreeze
    reason: expired waiver
    expires: "2026-11-01T00:00:00Z"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.yaml"), append(held, gate...), 0o644))
	stdout, _, err := run(t, "explain", "--snapshot", dir, "--policy-dir", freezeDir(t), "--now", now, "-n", "team-a", "etcd", "-o", "json")
	require.NoError(t, err)
	var rep explain.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	i := slices.IndexFunc(rep.Denials, func(d explain.Denial) bool { return d.Code == "TestFreeze" })
	require.GreaterOrEqual(t, i, 0, "the freeze denies")
	patch := rep.Denials[i].Lift[len(rep.Denials[i].Lift)-1].Command
	assert.Contains(t, patch, `{"code":"OperatorDegraded","reason":"known flaky probe","expires":"2026-12-01T00:00:00Z"}`, "a merge patch replaces the list: keep the others")
	assert.Contains(t, patch, `{"code":"TestFreeze","reason":"<why this upgrade is safe anyway>"}`)
	assert.NotContains(t, patch, "expired waiver", "the expired override of the same code is replaced")
}

// freezeDir is a --policy-dir with a pack that always denies with TestFreeze.
func freezeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "packs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "packs", "freeze.rego"), []byte(`# METADATA
# description: Test freeze.
package tollgate.packs.testfreeze

# METADATA
# title: Everything is frozen
# custom:
#   code: TestFreeze
deny contains {"code": rego.metadata.rule().custom.code, "message": "frozen for the test"} if true
`), 0o644))
	return dir
}

func TestEvalFailOnDeny(t *testing.T) {
	_, _, err := run(t, "eval", "--snapshot", fixture("held.yaml"), "--now", now, "--fail-on-deny", "-o", "json")
	require.Error(t, err)
	assert.Equal(t, exitDenied, exitCode(err))

	_, _, err = run(t, "eval", "--snapshot", fixture("allowed.yaml"), "--now", now, "--fail-on-deny", "-o", "json")
	require.NoError(t, err)

	_, _, err = run(t, "eval", "--snapshot", fixture("held.yaml"), "--now", now, "-o", "json")
	require.NoError(t, err, "without --fail-on-deny a denial is not an error")
}

func TestEvalAuditModeNeverApproves(t *testing.T) {
	stdout, _, err := run(t, "eval", "--snapshot", fixture("allowed.yaml"), "--now", now, "--default-mode", "Audit", "-o", "json")
	require.NoError(t, err)
	var rep evaluation.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.InstallPlans, 1)
	assert.False(t, rep.InstallPlans[0].Approvable)
	assert.Equal(t, []approval.Blocker{{CSV: "etcd.v0.9.4", Subscription: "team-b/etcd", Reason: approval.BlockAudit}}, rep.InstallPlans[0].Blockers)
	assert.True(t, rep.Subscriptions[0].Decision.Allowed, "Audit mode decides the same, it only does not approve")
}

func TestEvalPolicyDirAddsAndReplacesModules(t *testing.T) {
	dir := freezeDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "packs", "freeze_test.rego"), []byte("this is not Rego and must be skipped"), 0o644))
	stdout, _, err := run(t, "eval", "--snapshot", fixture("allowed.yaml"), "--now", now, "--policy-dir", dir, "-o", "json")
	require.NoError(t, err)
	var rep evaluation.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Subscriptions, 1)
	assert.False(t, rep.Subscriptions[0].Decision.Allowed)
	assert.Equal(t, "TestFreeze", rep.Subscriptions[0].Decision.Denials[0].Code)
	assert.Contains(t, rep.Subscriptions[0].Decision.Denials[0].Source, "packs/freeze.rego:")
	assert.False(t, rep.InstallPlans[0].Approvable)

	broken := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(broken, "bad.rego"), []byte("package tollgate.packs.bad\n\ndeny contains x if {\n"), 0o644))
	_, _, err = run(t, "eval", "--snapshot", fixture("allowed.yaml"), "--policy-dir", broken)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.rego:")
	assert.Contains(t, err.Error(), "fix the files named below")
}

func TestEvalUsesThePolicyConfigMapsOfTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	held, err := os.ReadFile(fixture("held.yaml"))
	require.NoError(t, err)
	cm := `
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: disable-not-upgradeable
  namespace: tollgate-system
  labels:
    tollgate.dev/policy: data
data:
  config.yaml: |
    disabledCodes: [OperatorNotUpgradeable]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.yaml"), append(held, cm...), 0o644))
	withCM, _, err := run(t, "eval", "--snapshot", dir, "--now", now, "-o", "json")
	require.NoError(t, err)
	without, _, err := run(t, "eval", "--snapshot", fixture("held.yaml"), "--now", now, "-o", "json")
	require.NoError(t, err)
	var a, b evaluation.Report
	require.NoError(t, json.Unmarshal([]byte(withCM), &a))
	require.NoError(t, json.Unmarshal([]byte(without), &b))
	assert.NotEqual(t, a.PolicyRevision, b.PolicyRevision, "the ConfigMap's data is part of the policy set")
	assert.True(t, a.Subscriptions[0].Decision.Allowed, "the data ConfigMap disables OperatorNotUpgradeable")
	assert.False(t, b.Subscriptions[0].Decision.Allowed)
	assert.True(t, a.InstallPlans[0].Approvable)
}

func TestErrorsSayWhatToDo(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		args     []string
		want     string
	}{
		{"eval without a snapshot", []string{"eval"}, `required flag(s) "snapshot" not set`},
		{"eval of a path that does not exist", []string{"eval", "--snapshot", "no/such/file.yaml"}, "check the --snapshot path"},
		{"a malformed --now", []string{"eval", "--snapshot", fixture("held.yaml"), "--now", "tomorrow"}, "use an RFC 3339 time such as 2026-11-20T12:00:00Z"},
		{"an unknown output format", []string{"eval", "--snapshot", fixture("held.yaml"), "-o", "xml"}, "use one of table, wide, json, yaml, name, jsonpath=TEMPLATE"},
		{"a jsonpath without a template", []string{"eval", "--snapshot", fixture("held.yaml"), "-o", "jsonpath="}, "template format specified but no template given"},
		{"a jsonpath that does not parse", []string{"eval", "--snapshot", fixture("held.yaml"), "-o", "jsonpath={.subscriptions["}, "unterminated array"},
		{"an unknown mode", []string{"eval", "--snapshot", fixture("held.yaml"), "--default-mode", "Strict"}, "use Enforce or Audit"},
		{"an unknown flag", []string{"eval", "--snapshot", fixture("held.yaml"), "--colour"}, "unknown flag: --colour"},
		{"a --policy-dir that is a file", []string{"eval", "--snapshot", fixture("held.yaml"), "--policy-dir", fixture("held.yaml")}, "is not a folder"},
		{"explain without a name", []string{"explain", "--snapshot", fixture("held.yaml")}, "give the name of one Subscription, e.g. tollgate explain -n operators etcd (kubectl get subscriptions -A lists them)"},
		{"explain with two names", []string{"explain", "--snapshot", fixture("held.yaml"), "etcd", "prometheus"}, "give the name of one Subscription"},
		{"completion of an unknown shell", []string{"completion", "tcsh"}, "give one shell: bash, zsh, fish or powershell, e.g. tollgate completion bash"},
		{"completion of two shells", []string{"completion", "bash", "zsh"}, "give one shell"},
		{"policy export without a folder", []string{"policy", "export"}, "give the folder to write to, e.g. tollgate policy export ./tollgate-policies"},
		{"policy test without a folder", []string{"policy", "test"}, "give at least one folder of .rego tests, e.g. tollgate policy test site/"},
		{"explain of a Subscription that does not exist", []string{"explain", "--snapshot", fixture("held.yaml"), "-n", "team-a", "nope"}, "kubectl get subscriptions -A"},
		{"explain in an unknown format", []string{"explain", "--snapshot", fixture("held.yaml"), "-n", "team-a", "etcd", "-o", "xml"}, "use one of text, json, yaml, name"},
		{"explain with both -n and -A", []string{"explain", "--snapshot", fixture("held.yaml"), "-n", "team-a", "-A", "etcd"}, "either -n NAMESPACE or -A"},
		{"replay -o name", []string{"eval", "--replay", fixture("held.yaml"), "-o", "name"}, "names no objects"},
		{"snapshot with both -n and -A", []string{"snapshot", "-n", "x", "-A", "--kubeconfig", "/dev/null"}, "either -n NAMESPACE or -A"},
		{"snapshot without a cluster", []string{"snapshot", "--kubeconfig", filepath.Join("no", "such", "kubeconfig")}, "find the cluster"},
		{"demo is not part of the shipped binary", []string{"demo"}, `unknown command "demo"`},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestEveryCommandHasHelpWithAnExample(t *testing.T) {
	var commands [][]string
	var walk func(path []string, cmd *cobra.Command)
	walk = func(path []string, cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			p := append(slices.Clone(path), sub.Name())
			commands = append(commands, p)
			walk(p, sub)
		}
	}
	walk(nil, newRootCommand())
	require.NotEmpty(t, commands)
	for _, path := range commands {
		t.Run(strings.Join(path, " "), func(t *testing.T) {
			stdout, _, err := run(t, append(path, "--help")...)
			require.NoError(t, err)
			assert.Contains(t, stdout, "Examples:")
		})
	}
}

func TestAsAKubectlPluginTheUsageSaysKubectlTollgate(t *testing.T) {
	saved := os.Args[0]
	t.Cleanup(func() { os.Args[0] = saved })
	os.Args[0] = "/usr/local/bin/kubectl-tollgate"
	root := newRootCommand()
	assert.Equal(t, "kubectl tollgate", root.DisplayName())
	cmd, _, err := root.Find([]string{"explain"})
	require.NoError(t, err)
	assert.Equal(t, "kubectl tollgate explain [-n NAMESPACE | -A] SUBSCRIPTION | clusterextension/NAME [flags]", cmd.UseLine())
}
