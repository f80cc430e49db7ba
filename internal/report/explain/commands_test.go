package explain

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// pasteShell runs printed commands the way a person pastes them: sh -c, with stubs for
// kubectl and tollgate on PATH that write their arguments, one per line, to a file. MARKER in
// a hostile string stands for a file that nothing may create.
type pasteShell struct {
	dir, marker, argv string
}

func newPasteShell(t *testing.T) *pasteShell {
	t.Helper()
	dir := t.TempDir()
	s := &pasteShell{dir: dir, marker: filepath.Join(dir, "MARKER"), argv: filepath.Join(dir, "argv")}
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGV_FILE\"\n"
	for _, name := range []string{"kubectl", "tollgate"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(stub), 0o755))
	}
	return s
}

func (s *pasteShell) hostile(text string) string { return strings.ReplaceAll(text, "MARKER", s.marker) }

// run pastes line and returns the program it ran and that program's arguments.
func (s *pasteShell) run(t *testing.T, line string) (string, []string) {
	t.Helper()
	_ = os.Remove(s.argv)
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = []string{"PATH=" + s.dir + ":/usr/bin:/bin", "ARGV_FILE=" + s.argv, "HOME=" + s.dir}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", line, out)
	assert.Empty(t, string(out), "the stub prints nothing, so nothing else ran: %s", line)
	assert.NoFileExists(t, s.marker, "pasting %s ran more than the command", line)
	got, err := os.ReadFile(s.argv)
	require.NoError(t, err, "the stub ran: %s", line)
	program := strings.Fields(line)[0]
	return program, strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
}

// commandLines are the lines of explain's text output that are commands to paste.
func commandLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "kubectl ") || strings.HasPrefix(l, "tollgate ") {
			out = append(out, l)
		}
	}
	return out
}

// hostileReasons are override reasons an admin may write (the API server takes any string).
var hostileReasons = []string{
	"it's safe",
	"'; touch MARKER; echo '",
	"'\\''; touch MARKER; '\\''",
	"$(touch MARKER)",
	"`touch MARKER`",
	"safe; touch MARKER",
	"safe && touch MARKER",
	"safe | tee MARKER",
	"safe > MARKER",
	"line one\ntouch MARKER\nline three",
	"\"; touch MARKER; \"",
	"\\\"; touch MARKER; #",
	"${IFS}touch${IFS}MARKER",
	"\\u003c literal escape text \\u003e",
	"\x1b[2J\x1b[32mALLOWED\x1b[0m",
	"\x1b]52;c;dG91Y2ggTUFSS0VS\x07",
	"carriage\rreturn",
	"tab\there",
	"etcd\u202egpj",
	"\u2066isolate\u2069 \u200f\u061c",
	"C1 \u009b2J \u0085",
	"DEL \x7f NUL \x00",
	"non-BMP 🙂 and accents déjà",
}

func gateWith(reason string) *approval.Decision {
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "etcd"}}
	gate := &tollgatev1alpha1.UpgradeGate{Spec: tollgatev1alpha1.UpgradeGateSpec{Overrides: []tollgatev1alpha1.Override{
		{Code: "OperatorDegraded", Reason: reason},
		{Code: "OperatorNotUpgradeable", Reason: "an expired waiver, replaced"},
	}}}
	return &approval.Decision{Document: &input.Document{Subscription: sub, Gate: gate}, Result: &engine.Result{}}
}

// render prints a report with one overridden denial and the given remedies, as explain does.
func render(t *testing.T, reason string, lift ...Remedy) string {
	t.Helper()
	rep := &Report{Namespace: "team-a", Name: "etcd", Denials: []Denial{
		{Code: "OperatorDegraded", Message: "m", Overridden: true, OverrideReason: reason},
		{Code: "OperatorNotUpgradeable", Message: "m", Lift: lift},
	}}
	var buf bytes.Buffer
	require.NoError(t, rep.WriteText(&buf))
	assertTerminalSafe(t, buf.String())
	return buf.String()
}

func TestOverridePatchIsSafeToPasteWhateverTheReasons(t *testing.T) {
	sh := newPasteShell(t)
	x := &Explainer{Self: "tollgate"}
	for _, reason := range hostileReasons {
		reason = sh.hostile(reason)
		t.Run(reason, func(t *testing.T) {
			r := x.remedy(gateWith(reason), engine.Remedy{Text: "an admin overrides it", Override: "OperatorNotUpgradeable"})
			lines := commandLines(render(t, reason, r))
			require.Equal(t, []string{r.Command}, lines, "the command prints exactly as the report holds it")
			program, args := sh.run(t, lines[0])
			assert.Equal(t, "kubectl", program)
			require.Len(t, args, 9, "%q", args)
			assert.Equal(t, []string{"patch", "upgradegate", "-n", "team-a", "etcd", "--type", "merge", "-p"}, args[:8])
			var patch struct {
				Spec struct {
					Overrides []tollgatev1alpha1.Override `json:"overrides"`
				} `json:"spec"`
			}
			require.NoError(t, json.Unmarshal([]byte(args[8]), &patch))
			assert.Equal(t, []tollgatev1alpha1.Override{
				{Code: "OperatorDegraded", Reason: reason},
				{Code: "OperatorNotUpgradeable", Reason: "<why this upgrade is safe anyway>"},
			}, patch.Spec.Overrides, "the other override is carried with its reason intact")
		})
	}
}

func TestPolicyCommandsArePrintedOnlyWhenPlain(t *testing.T) {
	sh := newPasteShell(t)
	x := &Explainer{Self: "tollgate"}
	for _, tc := range []struct {
		command string
		want    []string
	}{
		{"kubectl edit operatorcondition -n team-a etcd.v0.9.2", []string{"edit", "operatorcondition", "-n", "team-a", "etcd.v0.9.2"}},
		{"kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml", []string{"get", "configmaps", "-A", "-l", "tollgate.dev/policy=data", "-o", "yaml"}},
		{`kubectl patch subscription -n team-a etcd --type merge -p '{"spec":{"source":"NAME","sourceNamespace":"NAMESPACE"}}'`,
			[]string{"patch", "subscription", "-n", "team-a", "etcd", "--type", "merge", "-p", `{"spec":{"source":"NAME","sourceNamespace":"NAMESPACE"}}`}},
		{`kubectl get cm  -o 'custom-columns=STATUS:.metadata.annotations.tollgate\.dev/policy-status'`,
			[]string{"get", "cm", "-o", `custom-columns=STATUS:.metadata.annotations.tollgate\.dev/policy-status`}},
		{"kubectl annotate cm x 'note=it'\\''s; $(touch MARKER) `touch MARKER`'", []string{"annotate", "cm", "x", "note=it's; $(touch MARKER) `touch MARKER`"}},
	} {
		command := sh.hostile(tc.command)
		t.Run(command, func(t *testing.T) {
			r := x.remedy(gateWith("r"), engine.Remedy{Text: "do it:", Command: command})
			lines := commandLines(render(t, "r", r))
			require.Len(t, lines, 1)
			_, args := sh.run(t, lines[0])
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = sh.hostile(w)
			}
			assert.Equal(t, want, args)
		})
	}
	for _, command := range hostilePolicyCommands {
		command = sh.hostile(command)
		t.Run(command, func(t *testing.T) {
			r := x.remedy(gateWith("r"), engine.Remedy{Text: "do it:", Command: command})
			assert.Empty(t, r.Command, "an unchecked command is dropped")
			assert.Contains(t, r.Text, "do it (the policy's command is left out")
			assert.Empty(t, commandLines(render(t, "r", r)))
		})
	}
}

// hostilePolicyCommands are commands a policy ConfigMap or bundle could return.
var hostilePolicyCommands = []string{
	"kubectl get pods; touch MARKER",
	"kubectl get $(touch MARKER)",
	"kubectl get `touch MARKER`",
	"kubectl get pods && touch MARKER",
	"kubectl get pods || touch MARKER",
	"kubectl get pods | tee MARKER",
	"kubectl get pods > MARKER",
	"kubectl get pods & touch MARKER",
	`kubectl get "$(touch MARKER)"`,
	"kubectl get pods\ntouch MARKER",
	"kubectl get pods\rtouch MARKER",
	"kubectl get\tpods",
	"kubectl get 'pods",
	"kubectl get 'a'\"'\"'; touch MARKER'",
	"kubectl get pods \x1b[2J",
	"kubectl get '\x1b]52;c;eA==\x07'",
	"kubectl get pods \u202e",
	"kubectl get ${IFS}",
	"kubectl get ~root",
	"kubectl get *",
	"kubectl get pods # hidden",
	"kubectl -o custom-columns=S:.metadata.annotations.tollgate\\.dev/policy-status",
}

func TestPeerAndNoticeCommandsNameOnlyPlainNames(t *testing.T) {
	sh := newPasteShell(t)
	x := &Explainer{Self: "tollgate"}
	r := x.remedy(gateWith("r"), engine.Remedy{Text: "lift prometheus's hold", Subscription: &engine.ObjectKey{Namespace: "team-c", Name: "prometheus"}})
	_, args := sh.run(t, r.Command)
	assert.Equal(t, []string{"explain", "-n", "team-c", "prometheus"}, args)
	for _, key := range hostileKeys {
		r := x.remedy(gateWith("r"), engine.Remedy{Text: "t", Subscription: &engine.ObjectKey{Namespace: sh.hostile(key[0]), Name: sh.hostile(key[1])}})
		assert.Empty(t, r.Command, "%q", key)
		dec := gateWith("r")
		dec.Subscription.Namespace, dec.Subscription.Name = sh.hostile(key[0]), sh.hostile(key[1])
		assert.Empty(t, overridePatch(dec, "OperatorDegraded"), "%q", key)
		assert.Empty(t, kubectl("patch", "subscription", dec.Subscription.Namespace, dec.Subscription.Name), "%q", key)
	}
}

// hostileKeys are namespace/name pairs a policy or a snapshot could name.
var hostileKeys = [][2]string{
	{"team-a", "$(touch MARKER)"},
	{"team-a;touch MARKER", "etcd"},
	{"-A", "etcd"},
	{"team-a", "--kubeconfig=/tmp/x"},
	{"team-a", "Etcd"},
	{"team-a", "etcd x"},
	{"team-a", "etcd\n"},
	{"", "etcd"},
	{"team-a", "etcd\u202e"},
}
