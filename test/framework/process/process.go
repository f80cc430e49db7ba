// Package process runs the programs a test needs beside its API server (real OLM's operators,
// opm, catalogd, ...), each with its output in a log file that the test prints the end of
// when it fails.
package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Process is one program, run for a test.
type Process struct {
	// Name names the program in messages and its log file, <logDir>/<Name>.log.
	Name string
	// Log is the path of its log: its standard output and error.
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// stopGrace is how long a process has to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// Start runs bin with args, its output appended to <logDir>/<name>.log, and stops it when the
// test ends. Its environment is the test's minus CI (under which OLM v0 turns its own object
// validation on and panics on objects it did not label), plus env. It dies with the test
// binary.
func Start(t testing.TB, logDir, name string, env []string, bin string, args ...string) *Process {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("log of %s: %v", name, err)
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // the test's own programs, built by make
	cmd.Env = append(withoutCI(os.Environ()), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &Process{Name: name, cmd: cmd, Log: log.Name(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	return p
}

func withoutCI(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CI=") {
			out = append(out, kv)
		}
	}
	return out
}

// Stop ends the process (SIGTERM, then SIGKILL after stopGrace) and waits until it has
// exited. Stopping it again does nothing.
func (p *Process) Stop() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Exited says whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Tail is the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// PrintLogs logs the last n lines of each process's log to t.
func PrintLogs(t testing.TB, n int, procs ...*Process) {
	t.Helper()
	for _, p := range procs {
		t.Logf("--- %s (last lines of %s)\n%s", p.Name, p.Log, p.Tail(n))
	}
}
