// Package netns runs a test binary in a private network namespace of its own: a suite's
// TestMain re-runs its binary there, where servers on fixed ports collide with nothing else on
// the machine and nothing can reach them from outside.
//
//	func TestMain(m *testing.M) { netns.Main("TOLLGATE_MY_SUITE_NETNS", m.Run) }
package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Main runs a suite in a private network namespace and exits: the first run re-runs the test
// binary there (env marks the re-run) and exits with its code; the re-run brings the loopback
// interface up, then exits with run's code.
func Main(env string, run func() int) {
	if !inPrivateNetwork(env) {
		os.Exit(runInPrivateNetwork(env))
	}
	if err := loopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(run())
}

// inPrivateNetwork says whether this process is the re-run that env marks.
func inPrivateNetwork(env string) bool { return os.Getenv(env) != "" }

// runInPrivateNetwork runs this test binary again, with the same arguments and env set, in a
// new network namespace (and a new user namespace, so that no privilege is needed), and
// returns its exit code.
func runInPrivateNetwork(env string) int {
	err := rerun(env, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET)
	if errors.Is(err, syscall.EPERM) && os.Getuid() == 0 {
		err = rerun(env, syscall.CLONE_NEWNET) // user namespaces refused, but root may still unshare
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s runs in a private network namespace: %v\n", filepath.Base(os.Args[0]), err)
		return 1
	}
	return 0
}

// rerun runs this binary again in the namespaces of flags and waits for it. It dies with
// this process.
func rerun(env string, flags uintptr) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, os.Args[1:]...) //nolint:gosec // this very test binary
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if flags&syscall.CLONE_NEWUSER != 0 {
		// Root inside, so that the re-run binary may bring the loopback interface up.
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return cmd.Run()
}

// loopbackUp brings up lo, which a new network namespace starts with down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read flags of lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}
