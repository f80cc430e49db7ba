package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// pasteReasons are override reasons an admin may write (the API server takes any string);
// MARKER stands for a file that pasting a command must never create.
var pasteReasons = []string{
	"it's known: '; touch MARKER; echo '",
	"$(touch MARKER) and `touch MARKER`",
	"a; touch MARKER && touch MARKER | tee MARKER > MARKER",
	"first line\ntouch MARKER\n",
	"\"; touch MARKER; \" \\' ${IFS}",
	"\x1b[2J\x1b[32mALLOWED\x1b[0m \x1b]52;c;eA==\x07 \r \u202e \u009b",
}

// TestExplainCommandsAreSafeToPaste runs `tollgate explain` on a held Subscription whose gate
// holds overrides with hostile reasons, pastes every command it prints into sh with a stub
// kubectl that writes its arguments, one per line, and checks that the stub got exactly the
// intended arguments and nothing else ran.
func TestExplainCommandsAreSafeToPaste(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	argvFile := filepath.Join(dir, "argv")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGV_FILE\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubectl"), []byte(stub), 0o755))
	overrides := make([]tollgatev1alpha1.Override, len(pasteReasons))
	for i, r := range pasteReasons {
		overrides[i] = tollgatev1alpha1.Override{Code: "Waived" + string(rune('A'+i)), Reason: strings.ReplaceAll(r, "MARKER", marker)}
	}
	snap := snapshotWithGate(t, "invalid-catalog.yaml", "team-e", "etcd", overrides)

	stdout, stderr, err := run(t, "explain", "--snapshot", snap, "--now", now, "-n", "team-e", "etcd")
	require.NoError(t, err, stderr)
	assert.NotContains(t, stdout, "\x1b", "the text is escaped too")
	var patch []string
	for _, line := range strings.Split(stdout, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "kubectl ") {
			continue
		}
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "ARGV_FILE=" + argvFile}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Empty(t, string(out), line)
		assert.NoFileExists(t, marker, "pasting %s ran something else", line)
		got, err := os.ReadFile(argvFile)
		require.NoError(t, err)
		if args := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"); strings.HasPrefix(line, "kubectl patch upgradegate ") {
			patch = args
		}
	}
	require.Len(t, patch, 9, "explain prints the override patch:\n%s", stdout)
	assert.Equal(t, []string{"patch", "upgradegate", "-n", "team-e", "etcd", "--type", "merge", "-p"}, patch[:8])
	var body struct {
		Spec tollgatev1alpha1.UpgradeGateSpec `json:"spec"`
	}
	require.NoError(t, json.Unmarshal([]byte(patch[8]), &body))
	require.Len(t, body.Spec.Overrides, len(overrides)+1)
	var carried []tollgatev1alpha1.Override
	for _, o := range body.Spec.Overrides {
		if o.Reason == "<why this upgrade is safe anyway>" {
			continue
		}
		carried = append(carried, o)
	}
	assert.Equal(t, overrides, carried, "every other override is carried with its reason intact")
}

// snapshotWithGate is a copy of a fixture with a gate holding overrides.
func snapshotWithGate(t *testing.T, fixtureName, namespace, name string, overrides []tollgatev1alpha1.Override) string {
	t.Helper()
	gate, err := json.Marshal(map[string]any{"apiVersion": "tollgate.dev/v1alpha1", "kind": "UpgradeGate",
		"metadata": map[string]any{"namespace": namespace, "name": name}, "spec": map[string]any{"overrides": overrides}})
	require.NoError(t, err)
	var ascii strings.Builder // YAML refuses raw C1 controls and DEL, even in a string
	for _, r := range string(gate) {
		if r < 0x7f {
			ascii.WriteRune(r)
		} else {
			fmt.Fprintf(&ascii, "\\u%04x", r)
		}
	}
	state, err := os.ReadFile(fixture(fixtureName))
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "snapshot")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.yaml"), []byte(string(state)+"\n---\n"+ascii.String()+"\n"), 0o644))
	return dir
}
