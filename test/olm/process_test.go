package olm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// process is one of real OLM's programs, run for a test; its output goes to a log file that
// the test prints the end of when it fails.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// stopGrace is how long a process has to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// startProcess runs bin with args and env (added to the test's environment minus CI, which
// turns OLM's own object validation on and makes it panic on objects it did not label).
func startProcess(t *testing.T, logDir, name string, env []string, bin string, args ...string) *process {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("log of %s: %v", name, err)
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // OLM's binaries, built by make olm
	cmd.Env = append(withoutCI(os.Environ()), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log.Name(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

func withoutCI(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) < 3 || kv[:3] != "CI=" {
			out = append(out, kv)
		}
	}
	return out
}

// stop ends the process (SIGTERM, then SIGKILL after stopGrace) and waits until it has
// exited. Stopping it again does nothing.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exited says whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// tail is the last n lines of the process's log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
