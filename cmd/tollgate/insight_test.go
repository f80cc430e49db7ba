package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/statusreport"
	"github.com/tollgate-dev/tollgate/test/framework/demo"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// The insight fixture (testdata/insight/state.yaml): team-a/etcd held by OperatorNotUpgradeable,
// team-b/etcd allowed, team-f/etcd held only by the policy ConfigMap freeze (ChangeFreeze).
var (
	insightState = filepath.Join("testdata", "insight", "state.yaml")
	insightGates = filepath.Join("testdata", "insight", "gates.yaml")
	insightDir   = filepath.Join("testdata", "insight")
)

const insightNow = "2026-11-20T12:00:00Z"

func TestPolicyDiffOnASnapshot(t *testing.T) {
	diff := func(args ...string) (string, string, error) {
		return run(t, append([]string{"policy", "diff", "--snapshot", insightState, "--now", insightNow}, args...)...)
	}
	block := filepath.Join(insightDir, "candidate-block")
	lifted := filepath.Join(insightDir, "freeze-lifted.yaml")

	t.Run("a candidate that blocks one Subscription and allows a held one", func(t *testing.T) {
		stdout, stderr, err := diff("--policy-dir", block, "--configmap", lifted, "-o", "json")
		require.NoError(t, err, stderr)
		assert.Empty(t, stderr)
		assert.JSONEq(t, `{
  "summary": {"newlyBlocked": 1, "newlyAllowed": 1, "changed": 0, "unchanged": 1},
  "changes": [
    {"namespace": "team-b", "name": "etcd", "before": {"allowed": true, "codes": []}, "after": {"allowed": false, "codes": ["ChangeTicketMissing"]}},
    {"namespace": "team-f", "name": "etcd", "before": {"allowed": false, "codes": ["ChangeFreeze"]}, "after": {"allowed": true, "codes": []}}
  ]
}`, stdout)
	})

	t.Run("the table says what changes, plans included, and sums up", func(t *testing.T) {
		stdout, _, err := diff("--policy-dir", block, "--configmap", lifted)
		require.NoError(t, err)
		for _, want := range []string{
			"NEWLY BLOCKED (1)", "team-b  etcd  allowed  held: ChangeTicketMissing",
			"NEWLY ALLOWED (1)", "team-f  etcd  held: ChangeFreeze  allowed",
			"INSTALL PLANS WHOSE VERDICT CHANGES (2)",
			"team-b  install-etcd-094  approve  blocked: etcd.v0.9.4 (team-b/etcd: ChangeTicketMissing)",
			"Summary: 1 newly blocked, 1 newly allowed, 0 held by other codes, 1 unchanged.",
		} {
			assert.Contains(t, oneLine(stdout), oneLine(want))
		}
		assert.NotContains(t, stdout, "team-a", "unchanged Subscriptions are only counted")
	})

	t.Run("--fail-on-block exits 3 when anything would be newly blocked, 0 otherwise", func(t *testing.T) {
		_, _, err := diff("--policy-dir", block, "--fail-on-block")
		assert.Equal(t, exitNewlyBlocked, exitCode(err))
		_, _, err = diff("--configmap", lifted, "--fail-on-block")
		assert.NoError(t, err)
	})

	t.Run("-n narrows to one namespace", func(t *testing.T) {
		stdout, _, err := diff("--policy-dir", block, "-n", "team-a", "-o", "json")
		require.NoError(t, err)
		assert.JSONEq(t, `{"summary": {"newlyBlocked": 0, "newlyAllowed": 0, "changed": 0, "unchanged": 1}, "changes": []}`, stdout)
	})

	t.Run("a candidate that does not compile is an error naming the file and line", func(t *testing.T) {
		stdout, _, err := diff("--policy-dir", filepath.Join(insightDir, "candidate-broken"))
		require.Error(t, err)
		assert.Equal(t, 1, exitCode(err))
		assert.Empty(t, stdout, "never a diff")
		assert.Contains(t, err.Error(), filepath.Join(insightDir, "candidate-broken", "site.rego")+":5:1: unexpected } token")
	})

	t.Run("a broken --configmap is named by file and ConfigMap and key", func(t *testing.T) {
		cm := filepath.Join(t.TempDir(), "freeze.yaml")
		require.NoError(t, os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: freeze\n  labels: {tollgate.dev/policy: rego}\ndata:\n  freeze.rego: |\n    package tollgate.packs.sitefreeze\n\n    deny contains x if {\n"), 0o644))
		_, _, err := diff("--configmap", cm)
		require.Error(t, err)
		assert.Contains(t, err.Error(), cm+" (ConfigMap freeze) key freeze.rego:")
	})

	t.Run("a ConfigMap the manager would not read is refused", func(t *testing.T) {
		cm := filepath.Join(t.TempDir(), "cm.yaml")
		require.NoError(t, os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\n"), 0o644))
		_, _, err := diff("--configmap", cm)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "has no label tollgate.dev/policy")
	})

	t.Run("no candidate is an error", func(t *testing.T) {
		_, _, err := diff()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "give a candidate")
	})
}

func TestStatusOnASnapshot(t *testing.T) {
	stdout, stderr, err := run(t, "status", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow, "-o", "json")
	require.NoError(t, err, stderr)
	assert.JSONEq(t, `{
  "now": "2026-11-20T12:00:00Z",
  "scope": "all namespaces of the snapshot",
  "gates": {"total": 3, "allowed": 1, "held": 2, "noDecision": 0},
  "subscriptionsWithoutGate": 0,
  "byCode": [{"code": "ChangeFreeze", "gates": 1}, {"code": "OperatorNotUpgradeable", "gates": 1}],
  "heldLongest": [
    {"namespace": "team-a", "name": "etcd", "since": "2026-11-18T10:00:00Z", "code": "OperatorNotUpgradeable", "message": "etcd.v0.9.2 reports Upgradeable=False: migrating storage"},
    {"namespace": "team-f", "name": "etcd", "since": "2026-11-19T08:00:00Z", "code": "ChangeFreeze", "message": "team-f is frozen until 2026-12-01"}
  ],
  "bypasses": [
    {"gateKind": "UpgradeGate", "namespace": "team-b", "gate": "etcd", "kind": "InstallPlan", "name": "install-etcd-093",
     "uid": "3c1d7e0a-5b2f-4e6d-9a8c-1f0e2d3c4b5a", "field": "spec.approved", "to": "true", "by": "kubectl-patch",
     "at": "2026-11-19T15:00:00Z", "seenAt": "2026-11-19T15:00:01Z",
     "decision": {"allowed": false, "codes": ["OperatorNotUpgradeable"], "policyRevision": "aaaaaaaaaaaa"},
     "line": "InstallPlan team-b/install-etcd-093 approved by field manager kubectl-patch at 2026-11-19T15:00:00Z, without Tollgate's approval (gate team-b/etcd held it: OperatorNotUpgradeable; policy revision aaaaaaaaaaaa)"}
  ],
  "installPlans": {"pending": 3, "awaitingApproval": 3, "awaiting": [
    {"namespace": "team-a", "name": "install-etcd-094", "csvs": ["etcd.v0.9.4"]},
    {"namespace": "team-b", "name": "install-etcd-094", "csvs": ["etcd.v0.9.4"]},
    {"namespace": "team-f", "name": "install-etcd-094", "csvs": ["etcd.v0.9.4"]}
  ]},
  "policy": {
    "revision": "bbbbbbbbbbbb",
    "revisions": [
      {"revision": "bbbbbbbbbbbb", "gates": 2, "lastEvaluatedAt": "2026-11-20T09:00:00Z"},
      {"revision": "aaaaaaaaaaaa", "gates": 1, "lastEvaluatedAt": "2026-11-18T10:00:00Z"}
    ],
    "sources": [
      {"name": "broken", "kind": "rego", "status": "error", "serving": "previous", "errors": ["configmap/broken/broken.rego:3:1: rego_parse_error: unexpected eof token"]},
      {"name": "freeze", "kind": "rego", "status": "ok", "serving": "current", "errors": []}
    ]
  }
}`, stdout)

	t.Run("-A is every namespace, as without -n; with -n it is refused", func(t *testing.T) {
		all, stderr, err := run(t, "status", "-A", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow, "-o", "json")
		require.NoError(t, err, stderr)
		assert.JSONEq(t, stdout, all)
		long, _, err := run(t, "status", "--all-namespaces", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow, "-o", "json")
		require.NoError(t, err)
		assert.JSONEq(t, stdout, long)

		_, _, err = run(t, "status", "-A", "-n", "team-a", "--snapshot", insightState, "--now", insightNow)
		require.Error(t, err)
		assert.Equal(t, 1, exitCode(err))
		assert.Contains(t, err.Error(), "give either -n NAMESPACE or -A, not both")
	})

	t.Run("the table, --limit and a snapshot without gates", func(t *testing.T) {
		stdout, _, err := run(t, "status", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow, "--limit", "1")
		require.NoError(t, err)
		for _, want := range []string{
			"GATES 3: 1 allowed, 2 held, 0 without a decision yet",
			"BYPASSED (1, newest first): changes only Tollgate is meant to make, made by someone else bypassed: InstallPlan team-b/install-etcd-093 approved by field manager kubectl-patch at 2026-11-19T15:00:00Z, without Tollgate's approval (gate team-b/etcd held it: OperatorNotUpgradeable; policy revision aaaaaaaaaaaa)",
			"HELD LONGEST (1 of 2)",
			"team-a etcd 2026-11-18T10:00:00Z 2d2h OperatorNotUpgradeable etcd.v0.9.2 reports Upgradeable=False",
			"INSTALL PLANS 3 pending, 3 awaiting approval",
			"revision in force: bbbbbbbbbbbb (2 gate(s)); older decisions: aaaaaaaaaaaa on 1",
			"broken rego error previous configmap/broken/broken.rego:3:1:",
		} {
			assert.Contains(t, oneLine(stdout), want)
		}
		assert.NotContains(t, stdout, "team-f     etcd  2026-11-19")

		stdout, _, err = run(t, "status", "--snapshot", insightState, "--now", insightNow)
		require.NoError(t, err)
		assert.Contains(t, oneLine(stdout), "GATES 0: 0 allowed, 0 held, 0 without a decision yet; 3 Subscription(s) have no gate yet")
		assert.Contains(t, oneLine(stdout), "freeze rego ok current")
	})
}

func TestPolicyExportRunsWithTheRealOPA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	stdout, _, err := run(t, "policy", "export", dir)
	require.NoError(t, err)
	assert.Contains(t, stdout, "wrote 7 policy files and .manifest")
	var manifest struct {
		Revision string   `json:"revision"`
		Roots    []string `json:"roots"`
	}
	b, err := os.ReadFile(filepath.Join(dir, ".manifest"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &manifest))
	assert.Equal(t, []string{"tollgate"}, manifest.Roots)
	assert.Len(t, manifest.Revision, 12)
	assert.FileExists(t, filepath.Join(dir, "upgrade", "upgrade.rego"))
	assert.NoFileExists(t, filepath.Join(dir, "upgrade", "upgrade_test.rego"), "the tests stay out")

	_, _, err = run(t, "policy", "export", dir)
	require.Error(t, err, "a folder with files is refused without --force")
	_, _, err = run(t, "policy", "export", "--force", dir)
	require.NoError(t, err)

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on the PATH: cannot run go tool opa")
	}
	site, err := filepath.Abs(filepath.Join(insightDir, "site"))
	require.NoError(t, err)
	opa := exec.Command(goBin, "tool", "opa", "test", dir, site)
	opa.Dir = repo.Root()
	out, err := opa.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "PASS: 2/2")

	failing, err := filepath.Abs(filepath.Join(insightDir, "site-failing"))
	require.NoError(t, err)
	opa = exec.Command(goBin, "tool", "opa", "test", dir, failing)
	opa.Dir = repo.Root()
	out, err = opa.CombinedOutput()
	require.Error(t, err, "the real opa fails the failing fixture too: %s", out)
}

func TestPolicyTest(t *testing.T) {
	t.Run("passing tests", func(t *testing.T) {
		stdout, _, err := run(t, "policy", "test", filepath.Join(insightDir, "site"))
		require.NoError(t, err)
		assert.Contains(t, stdout, "PASS: 2/2")
	})

	t.Run("a failing test exits 2 and prints the failure as opa test does", func(t *testing.T) {
		stdout, _, err := run(t, "policy", "test", filepath.Join(insightDir, "site-failing"))
		require.Error(t, err)
		assert.Equal(t, exitTestsFailed, exitCode(err))
		assert.Equal(t, "1 of 2 test(s) failed", err.Error())
		assert.Contains(t, stdout, "data.tollgate.packs.sitefreeze_test.test_team_b_is_frozen_too: FAIL")
		assert.Contains(t, stdout, "FAILURES")
		assert.Contains(t, stdout, "PASS: 1/2")
		assert.Contains(t, stdout, "FAIL: 1/2")
	})

	t.Run("a built-in the manager refuses is refused here too", func(t *testing.T) {
		_, _, err := run(t, "policy", "test", filepath.Join(insightDir, "site-refused"))
		require.Error(t, err)
		assert.Equal(t, 1, exitCode(err))
		assert.Contains(t, err.Error(), filepath.ToSlash(filepath.Join(insightDir, "site-refused", "clock.rego"))+":10:2: time.now_ns is not allowed in Tollgate policies")
	})

	t.Run("--coverage prints the coverage (package regotest tests what it says)", func(t *testing.T) {
		stdout, _, err := run(t, "policy", "test", filepath.Join(insightDir, "site"), "--coverage")
		require.NoError(t, err)
		assert.Contains(t, stdout, "COVERAGE")
		assert.Contains(t, oneLine(stdout), "100.0% "+filepath.ToSlash(filepath.Join(insightDir, "site", "freeze.rego")))
	})

	t.Run("the embedded tests pass with the manager's capabilities, and with a pack", func(t *testing.T) {
		stdout, _, err := run(t, "policy", "test", "--embedded-tests", "--bundle", repo.Path("bundles", "packs", "freeze"), filepath.Join(insightDir, "site"))
		require.NoError(t, err, stdout)
		assert.Contains(t, stdout, "PASS: ")
		assert.NotContains(t, stdout, "FAIL")
	})

	t.Run("--run filters", func(t *testing.T) {
		stdout, _, err := run(t, "policy", "test", filepath.Join(insightDir, "site-failing"), "--run", "team_f")
		require.NoError(t, err)
		assert.Contains(t, stdout, "PASS: 1/1")
	})
}

func TestInsightCommandsHaveHelp(t *testing.T) {
	for _, args := range [][]string{{"policy"}, {"policy", "diff"}, {"policy", "export"}, {"policy", "test"}, {"status"}} {
		stdout, _, err := run(t, append(args, "--help")...)
		require.NoError(t, err, args)
		assert.Contains(t, stdout, "Examples:", args)
		assert.Contains(t, stdout, "tollgate "+strings.Join(args, " "), args)
	}
}

// TestPolicyDiffAndStatusAgainstARealAPIServer runs diff and status on a real API server (no
// manager: the gate's status is written here as the manager would).
func TestPolicyDiffAndStatusAgainstARealAPIServer(t *testing.T) {
	env, kubeconfig := demoCluster(t)
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: policysource.DefaultNamespace}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: policysource.DefaultNamespace, Name: "freeze", Labels: map[string]string{policysource.Label: "rego"},
			Annotations: map[string]string{policysource.StatusAnnotation: `{"status":"ok","serving":"current"}`}},
		Data: map[string]string{"freeze.rego": freezeModule},
	}))

	t.Run("policy diff: lifting the freeze leaves the upgrade held by the operator", func(t *testing.T) {
		lifted := filepath.Join(t.TempDir(), "freeze.yaml")
		require.NoError(t, os.WriteFile(lifted, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: freeze\n  labels: {tollgate.dev/policy: rego}\ndata:\n  freeze.rego: |\n    package tollgate.packs.clifreeze\n"), 0o644))
		stdout, stderr, err := run(t, "policy", "diff", "--kubeconfig", kubeconfig, "--configmap", lifted, "-o", "json")
		require.NoError(t, err, stderr)
		assert.Empty(t, stderr)
		assert.JSONEq(t, `{
  "summary": {"newlyBlocked": 0, "newlyAllowed": 0, "changed": 1, "unchanged": 0},
  "changes": [{"namespace": "demo", "name": "etcd",
    "before": {"allowed": false, "codes": ["ChangeFreeze", "OperatorNotUpgradeable"]},
    "after": {"allowed": false, "codes": ["OperatorNotUpgradeable"]}}]
}`, stdout)
	})

	t.Run("status reads the gate the manager wrote", func(t *testing.T) {
		since := metav1.NewTime(metav1.Now().Add(-3 * 3600e9).UTC().Truncate(1e9))
		gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: demo.Namespace, Name: demo.Subscription}}
		require.NoError(t, env.Client.Create(ctx, gate))
		gate.Status = tollgatev1alpha1.UpgradeGateStatus{
			Conditions: []metav1.Condition{{Type: tollgatev1alpha1.ConditionUpgradeBlocked, Status: metav1.ConditionTrue, Reason: "ChangeFreeze", Message: "frozen", LastTransitionTime: since}},
			Decision: tollgatev1alpha1.Decision{BlockedBy: "ChangeFreeze", PolicyRevision: "cccccccccccc", EvaluatedAt: &since,
				Denials: []tollgatev1alpha1.Denial{{Code: "ChangeFreeze", Message: "a change freeze is in effect until 2026-12-01"}}},
		}
		require.NoError(t, env.Client.Status().Update(ctx, gate))

		stdout, stderr, err := run(t, "status", "--kubeconfig", kubeconfig, "-o", "json")
		require.NoError(t, err, stderr)
		var rep statusreport.Report
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		assert.Equal(t, statusreport.GateCounts{Total: 1, Held: 1}, rep.Gates)
		assert.Equal(t, []statusreport.CodeCount{{Code: "ChangeFreeze", Gates: 1}}, rep.ByCode)
		require.Len(t, rep.HeldLongest, 1)
		assert.Equal(t, since.Format("2006-01-02T15:04:05Z07:00"), rep.HeldLongest[0].Since)
		assert.Equal(t, "a change freeze is in effect until 2026-12-01", rep.HeldLongest[0].Message)
		assert.Equal(t, 1, rep.InstallPlans.AwaitingApproval)
		assert.Equal(t, "cccccccccccc", rep.Policy.Revision)
		require.Len(t, rep.Policy.Sources, 1)
		assert.Equal(t, statusreport.SourceHealth{Name: "freeze", Kind: "rego", Status: "ok", Serving: "current", Errors: []string{}}, rep.Policy.Sources[0])

		stdout, _, err = run(t, "status", "--kubeconfig", kubeconfig)
		require.NoError(t, err)
		assert.Contains(t, oneLine(stdout), "demo etcd "+rep.HeldLongest[0].Since+" 3h0m ChangeFreeze")
	})
}
