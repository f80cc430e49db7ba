package olm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

var (
	buildOnce sync.Once
	cliPath   string
	buildErr  error
)

// tollgate runs the tollgate command, built once for the suite, against the world's API
// server as its admin, and returns its stdout; a failure fails the test with its stderr.
func (w *world) tollgate(args ...string) string {
	w.t.Helper()
	bin := cli(w.t)
	cmd := exec.Command(bin, append(args, "--kubeconfig", w.kubeconfig())...) //nolint:gosec // the command under test
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(w.t, cmd.Run(), "tollgate %v:\n%s", args, stderr.String())
	return stdout.String()
}

// cli builds cmd/tollgate into a folder of the suite's once and returns the binary's path.
func cli(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tollgate-olm-cli-")
		if err != nil {
			buildErr = err
			return
		}
		cliPath = filepath.Join(dir, "tollgate")
		cmd := exec.Command("go", "build", "-o", cliPath, "./cmd/tollgate")
		cmd.Dir = repo.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	require.NoError(t, buildErr)
	return cliPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string {
	return "go build ./cmd/tollgate: " + e.err.Error() + "\n" + e.out
}
