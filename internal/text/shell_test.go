package text_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/text"
)

// hostileArgs are arguments that a shell would interpret if they were pasted unquoted;
// MARKER is replaced by a file that must never be created.
var hostileArgs = []string{
	"it's fine",
	"'; touch MARKER; echo '",
	"$(touch MARKER)",
	"`touch MARKER`",
	"a; touch MARKER",
	"a && touch MARKER",
	"a || touch MARKER",
	"a | tee MARKER",
	"> MARKER",
	"line\ntouch MARKER",
	`"; touch MARKER; "`,
	`\'; touch MARKER #`,
	"'\\''",
	"${IFS}touch${IFS}MARKER",
	"$HOME",
	"*",
	"~",
	"!!",
	"# comment",
	"=ls",
	"-n",
	"",
	" ",
	"\ttab",
	"{a,b}",
	"a\x1b[2Jb",
}

func TestQuoteLeavesPlainWordsAlone(t *testing.T) {
	for _, w := range []string{"kubectl", "team-a", "etcd.v0.9.2", "tollgate.dev/policy=data", "-A", "--type", "NAME:.metadata.name,x"} {
		assert.Equal(t, w, text.Quote(w))
	}
	assert.Equal(t, `'it'\''s'`, text.Quote("it's"))
	assert.Equal(t, `''`, text.Quote(""))
	assert.Equal(t, `'=ls'`, text.Quote("=ls"), "zsh expands an unquoted =word")
}

// TestCommandRunsExactlyItsArguments runs each command in sh with a stub on PATH that writes
// its arguments, one per line, and checks it received exactly them and nothing else ran.
func TestCommandRunsExactlyItsArguments(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	argv := filepath.Join(dir, "argv")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGV_FILE\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stub"), []byte(stub), 0o755))
	for _, arg := range hostileArgs {
		arg = strings.ReplaceAll(arg, "MARKER", marker)
		line := text.Command("stub", "first", arg, "last")
		parsed, err := text.ParseCommand(line)
		if !strings.ContainsAny(arg, "\n\t\x1b") {
			require.NoError(t, err, "ParseCommand reads what Command writes: %s", line)
			assert.Equal(t, []string{"stub", "first", arg, "last"}, parsed)
		}
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "ARGV_FILE=" + argv}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", line, out)
		got, err := os.ReadFile(argv)
		require.NoError(t, err)
		assert.Equal(t, "first\n"+arg+"\nlast\n", string(got), "command: %s", line)
		assert.NoFileExists(t, marker, "command: %s", line)
	}
}

func TestParseCommandRefusesWhatAShellWouldInterpret(t *testing.T) {
	for _, line := range []string{
		"", "   ",
		"kubectl get pods; touch x",
		"kubectl get $(id)",
		"kubectl get `id`",
		"kubectl get pods | sh",
		"kubectl get pods && rm -rf x",
		"kubectl get pods > x",
		"kubectl get < x",
		`kubectl get "pods"`,
		`kubectl get po\ds`,
		"kubectl\tget",
		"kubectl get\npods",
		"kubectl get 'unterminated",
		"kubectl get 'new\nline'",
		"kubectl get '\x1b[2J'",
		"kubectl get '\u202e'",
		"kubectl get pods*",
		"kubectl get ~/x",
		"kubectl get pods # comment",
		"kubectl get !!",
		"kubectl get {a,b}",
		"kubectl get (x)",
		"kubectl get pöds",
		"kubectl get ${x}",
	} {
		_, err := text.ParseCommand(line)
		assert.ErrorIs(t, err, text.ErrNotPlainCommand, "%q", line)
	}
	args, err := text.ParseCommand(`kubectl patch subscription -n ns etcd --type merge -p '{"spec":{"source":"NAME"}}'`)
	require.NoError(t, err)
	assert.Equal(t, []string{"kubectl", "patch", "subscription", "-n", "ns", "etcd", "--type", "merge", "-p", `{"spec":{"source":"NAME"}}`}, args)
	args, err = text.ParseCommand(`kubectl get  'a'b'c'  x`)
	require.NoError(t, err)
	assert.Equal(t, []string{"kubectl", "get", "abc", "x"}, args)
}
