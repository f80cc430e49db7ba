package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/report/explain"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// TestOutputFormatsOnFixtures runs kubectl's output flags on snapshots: every format reads the
// report -o json documents, so a jsonpath written against -o json works.
func TestOutputFormatsOnFixtures(t *testing.T) {
	held := []string{"eval", "--snapshot", fixture("held.yaml"), "--now", insightNow}
	status := []string{"status", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow}
	diff := []string{"policy", "diff", "--snapshot", insightState, "--now", insightNow,
		"--policy-dir", filepath.Join(insightDir, "candidate-block"), "--configmap", filepath.Join(insightDir, "freeze-lifted.yaml")}
	explainHeld := []string{"explain", "--snapshot", fixture("held.yaml"), "--now", insightNow}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"eval -o name lists the Subscriptions", append(held, "-o", "name"), "subscription.operators.coreos.com/etcd\n"},
		{"eval -o jsonpath reads the -o json document", append(held, "-o", "jsonpath={.subscriptions[*].decision.denials[*].code}"), "OperatorNotUpgradeable"},
		{"eval -o jsonpath-as-json prints the matches as JSON", append(held, "-o", "jsonpath-as-json={.subscriptions[*].upToDate}"), "[\n    false\n]\n"},
		{"eval -o go-template", append(held, "-o", `go-template={{range .subscriptions}}{{.namespace}}/{{.name}} {{.state}}{{"\n"}}{{end}}`), "team-a/etcd UpgradePending\n"},
		{"--template alone is a go-template, as in kubectl", append(held, "--template", `{{len .installPlans}}`), "1"},
		{"eval --only subscriptions --no-headers prints that table's rows only, unindented", append(held, "--only", "subscriptions", "--no-headers"),
			"team-a  etcd  etcd  etcd.v0.9.2  etcd.v0.9.4  UpgradePending  Manual  Enforce  held: OperatorNotUpgradeable\n"},
		{"eval --only plans --no-headers", append(held, "--only", "plans", "--no-headers"),
			"team-a  install-etcd-094  no  etcd.v0.9.4  blocked: etcd.v0.9.4 (team-a/etcd: OperatorNotUpgradeable)\n"},
		{"eval --only catalogs -o wide --no-headers", append(held, "--only", "catalogs", "-o", "wide", "--no-headers"),
			"olm  operatorhubio  True (READY)  yes  -\n"},
		{"eval --only plans keeps the table's title and header", append(held, "--only", "plans"),
			"INSTALL PLANS (1)\n" +
				"  NAMESPACE  NAME              APPROVE  CSVS         WHY NOT\n" +
				"  team-a     install-etcd-094  no       etcd.v0.9.4  blocked: etcd.v0.9.4 (team-a/etcd: OperatorNotUpgradeable)\n"},
		{"status --only holds --no-headers", append(status, "--only", "holds", "--no-headers"),
			"team-a  etcd  2026-11-18T10:00:00Z  2d2h  OperatorNotUpgradeable  etcd.v0.9.2 reports Upgradeable=False: migrating storage\n" +
				"team-f  etcd  2026-11-19T08:00:00Z  1d4h  ChangeFreeze            team-f is frozen until 2026-12-01\n"},
		{"status --only bypasses --no-headers prints the bypassed lines only", append(status, "--only", "bypasses", "--no-headers"),
			"bypassed: InstallPlan team-b/install-etcd-093 approved by field manager kubectl-patch at 2026-11-19T15:00:00Z, without Tollgate's approval (gate team-b/etcd held it: OperatorNotUpgradeable; policy revision aaaaaaaaaaaa)\n"},
		{"status --only codes keeps the table's title and header", append(status, "--only", "codes"),
			"HELD BY CODE\n  CODE                    GATES\n  ChangeFreeze            1\n  OperatorNotUpgradeable  1\n"},
		{"policy diff --only newly-allowed --no-headers", append(diff, "--only", "newly-allowed", "--no-headers"), "team-f  etcd  held: ChangeFreeze  allowed\n"},
		{"policy diff --only codes-changed prints nothing when none changed", append(diff, "--only", "codes-changed"), ""},
		{"status -o name lists the longest holds", append(status, "-o", "name"), "upgradegate.tollgate.dev/etcd\nupgradegate.tollgate.dev/etcd\n"},
		{"status -o jsonpath", append(status, "-o", `jsonpath={range .byCode[*]}{.code}={.gates} {end}`), "ChangeFreeze=1 OperatorNotUpgradeable=1 "},
		{"policy diff -o jsonpath of the summary", append(diff, "-o", "jsonpath={.summary.newlyBlocked} {.summary.newlyAllowed}"), "1 1"},
		{"policy diff -o name lists the Subscriptions that change", append(diff, "-o", "name"), "subscription.operators.coreos.com/etcd\nsubscription.operators.coreos.com/etcd\n"},
		{"explain -o jsonpath", append(explainHeld, "-n", "team-a", "etcd", "-o", "jsonpath={.namespace}/{.name}: {.denials[*].code}"), "team-a/etcd: OperatorNotUpgradeable"},
		{"explain -o name", append(explainHeld, "-n", "team-a", "etcd", "-o", "name"), "subscription.operators.coreos.com/etcd\n"},
		{"explain -A finds the Subscription in its namespace", append(explainHeld, "-A", "etcd", "-o", "jsonpath={.namespace}"), "team-a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := run(t, tt.args...)
			require.NoError(t, err, stderr)
			assert.Equal(t, tt.want, stdout)
		})
	}
}

// Rows of eval's, status's and policy diff's tables have different columns: --no-headers,
// which drops what tells them apart, needs --only to pick one.
func TestNoHeadersNeedsOneTable(t *testing.T) {
	held := []string{"eval", "--snapshot", fixture("held.yaml"), "--now", insightNow}
	status := []string{"status", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow}
	diff := []string{"policy", "diff", "--snapshot", insightState, "--now", insightNow, "--configmap", filepath.Join(insightDir, "freeze-lifted.yaml")}
	tests := []struct {
		scenario string
		args     []string
		want     string
	}{
		{"eval -o wide --no-headers", append(held, "-o", "wide", "--no-headers"), "--no-headers prints rows only, and eval prints four tables with different columns: pick one with --only subscriptions|plans|catalogs|extensions"},
		{"eval --no-headers", append(held, "--no-headers"), "--no-headers prints rows only, and eval prints four tables with different columns: pick one with --only subscriptions|plans|catalogs|extensions"},
		{"eval: an --only that names no table", append(held, "--only", "denials"), `unknown --only "denials": use one of subscriptions, plans, catalogs, extensions`},
		{"eval --only with -o json", append(held, "--only", "plans", "-o", "json"), "--only picks a table of -o table or -o wide, not of -o json"},
		{"status --no-headers", append(status, "--no-headers"), "--no-headers prints rows only, and status prints six tables with different columns: pick one with --only bypasses|codes|holds|plans|extensions|policy"},
		{"status: an --only that names no table", append(status, "--only", "gates"), `unknown --only "gates": use one of bypasses, codes, holds, plans, extensions, policy`},
		{"policy diff --no-headers", append(diff, "--no-headers"), "--no-headers prints rows only, and policy diff prints four tables with different columns: pick one with --only newly-blocked|newly-allowed|codes-changed|plans"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			stdout, _, err := run(t, tt.args...)
			require.Error(t, err)
			assert.Equal(t, 1, exitCode(err))
			assert.Equal(t, tt.want, err.Error())
			assert.Empty(t, stdout)
		})
	}
}

func TestWideAddsColumns(t *testing.T) {
	stdout, _, err := run(t, "eval", "--snapshot", fixture("held.yaml"), "--now", insightNow, "-o", "wide")
	require.NoError(t, err)
	assert.Contains(t, stdout, "UPGRADE                       UP TO DATE  OVERRIDDEN")
	assert.Contains(t, stdout, "held: OperatorNotUpgradeable  no          -")

	stdout, _, err = run(t, "status", "--snapshot", insightState, "--snapshot", insightGates, "--now", insightNow, "-o", "wide")
	require.NoError(t, err)
	assert.Contains(t, stdout, "POLICY REVISION")
	assert.Contains(t, oneLine(stdout), "ChangeFreeze team-f is frozen until 2026-12-01 bbbbbbbbbbbb")

	stdout, _, err = run(t, "policy", "diff", "--snapshot", insightState, "--now", insightNow, "-o", "wide",
		"--policy-dir", filepath.Join(insightDir, "candidate-block"), "--configmap", filepath.Join(insightDir, "freeze-lifted.yaml"))
	require.NoError(t, err)
	assert.Contains(t, oneLine(stdout), "team-b etcd allowed held: ChangeTicketMissing ChangeTicketMissing -")
	assert.Contains(t, oneLine(stdout), "team-f etcd held: ChangeFreeze allowed - ChangeFreeze")
}

func TestExplainYAMLIsItsJSON(t *testing.T) {
	args := []string{"explain", "--snapshot", fixture("held.yaml"), "--now", insightNow, "-n", "team-a", "etcd"}
	asJSON, _, err := run(t, append(args, "-o", "json")...)
	require.NoError(t, err)
	asYAML, _, err := run(t, append(args, "-o", "yaml")...)
	require.NoError(t, err)
	fromYAML, err := yaml.YAMLToJSON([]byte(asYAML))
	require.NoError(t, err)
	assert.JSONEq(t, asJSON, string(fromYAML))
}

func TestExplainSaysWhereTheSubscriptionIs(t *testing.T) {
	_, _, err := run(t, "explain", "--snapshot", fixture("held.yaml"), "-n", "team-b", "etcd")
	require.Error(t, err)
	assert.Equal(t, "no Subscription etcd in namespace team-b; found in namespace team-a (use -n team-a)", err.Error())

	_, _, err = run(t, "explain", "--snapshot", fixture("held.yaml"), "-A", "nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Subscription nope in any namespace")
}

func TestExamplesNameTheProgramAsItIsRun(t *testing.T) {
	tests := []struct {
		name, arg0, want, notWant string
	}{
		{"as tollgate", "/usr/local/bin/tollgate", "\n  tollgate explain -n operators etcd", "kubectl tollgate"},
		{"as a kubectl plugin", "/usr/local/bin/kubectl-tollgate", "\n  kubectl tollgate explain -n operators etcd", "kubectl kubectl"},
		{"from kubectl's completion of the plugin", "kubectl-tollgate", "Usage:\n  kubectl tollgate explain", "kubectl kubectl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg0 := os.Args[0]
			t.Cleanup(func() { os.Args[0] = arg0 })
			os.Args[0] = tt.arg0
			stdout, _, err := run(t, "explain", "--help")
			require.NoError(t, err)
			assert.Contains(t, stdout, tt.want)
			assert.NotContains(t, stdout, tt.notWant)
		})
	}
}

func TestNoHelpTextNamesKubectlTwice(t *testing.T) {
	arg0 := os.Args[0]
	t.Cleanup(func() { os.Args[0] = arg0 })
	os.Args[0] = "kubectl-tollgate"
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		assert.NotContains(t, c.Long+c.Example, "kubectl kubectl", c.CommandPath())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		stdout, _, err := run(t, "completion", shell)
		require.NoError(t, err, shell)
		assert.Contains(t, stdout, "__complete", shell)
	}
	stdout, _, err := run(t, "__complete", "eval", "-o", "")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stdout, "table\nwide\njson\nyaml\nname\njsonpath=\n"), stdout)
}

// TestRunTakesKubectlsClusterFlags checks that `tollgate run` has kubectl's cluster flags beside
// the manager's, and that the Deployment's args still parse.
func TestRunTakesKubectlsClusterFlags(t *testing.T) {
	cmd := newRunCommand()
	for _, name := range []string{"kubeconfig", "context", "cluster", "user", "as", "as-group", "token", "server", "insecure-skip-tls-verify", "certificate-authority"} {
		assert.NotNil(t, cmd.Flags().Lookup(name), "--%s", name)
	}
	for _, name := range []string{"namespace", "request-timeout", "cache-dir"} {
		assert.Nil(t, cmd.Flags().Lookup(name), "--%s is not the manager's", name)
	}
	manifest, err := os.ReadFile(repo.Path("config", "manager", "manager.yaml"))
	require.NoError(t, err)
	var deploy struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(manifest, &deploy))
	args := deploy.Spec.Template.Spec.Containers[0].Args
	require.Equal(t, "run", args[0])
	require.NoError(t, cmd.ParseFlags(args[1:]))
	assert.True(t, cmd.Flags().Changed("leader-elect"))

	_, _, err = run(t, "run", "--kubeconfig", filepath.Join("no", "such", "kubeconfig"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "find the cluster", "run reads --kubeconfig")
}

func TestHelpListsKubectlsClusterFlagsApart(t *testing.T) {
	stdout, _, err := run(t, "explain", "--help")
	require.NoError(t, err)
	own, cluster, found := strings.Cut(stdout, "Cluster Flags (kubectl's):")
	require.True(t, found, stdout)
	assert.Contains(t, own, "-n, --namespace")
	assert.Contains(t, own, "--policy-dir")
	assert.NotContains(t, own, "--kubeconfig")
	for _, flag := range []string{"--kubeconfig", "--context", "--as ", "--as-group", "--token", "-s, --server", "--request-timeout"} {
		assert.Contains(t, cluster, flag)
	}

	stdout, _, err = run(t, "eval", "--help")
	require.NoError(t, err)
	assert.NotContains(t, stdout, "Cluster Flags", "eval reads no cluster")
}

func TestExplainAllNamespacesExplainsEach(t *testing.T) {
	args := []string{"explain", "--snapshot", insightState, "--now", insightNow, "-A", "etcd"}
	stdout, _, err := run(t, append(args, "-o", "json")...)
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(stdout))
	var namespaces []string
	for dec.More() {
		var rep explain.Report
		require.NoError(t, dec.Decode(&rep))
		namespaces = append(namespaces, rep.Namespace)
	}
	assert.Equal(t, []string{"team-a", "team-b", "team-f"}, namespaces, "one JSON document per Subscription, in namespace order")

	stdout, _, err = run(t, args...)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(stdout, "Subscription team-"), stdout)

	_, _, err = run(t, "explain", "--snapshot", insightState, "-n", "team-z", "etcd")
	require.Error(t, err)
	assert.Equal(t, "no Subscription etcd in namespace team-z; found in namespaces team-a, team-b, team-f (use -n with one of them, or -A to explain each)", err.Error())
}
