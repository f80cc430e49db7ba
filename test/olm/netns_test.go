package olm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// privateNetworkEnv marks the test binary that already runs in its private network namespace.
const privateNetworkEnv = "TOLLGATE_OLM_PRIVATE_NETWORK"

// inPrivateNetwork says whether this process is the one re-run in a private network namespace.
func inPrivateNetwork() bool { return os.Getenv(privateNetworkEnv) != "" }

// runInPrivateNetwork runs this test binary again, with the same arguments, in a new network
// namespace (and a new user namespace, so that no privilege is needed), and returns its exit
// code. OLM's operators bind :8080 and :8443 whatever their flags: there they collide with
// nothing else on the machine, and nothing there can be reached from outside.
func runInPrivateNetwork() int {
	err := rerun(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET)
	if errors.Is(err, syscall.EPERM) && os.Getuid() == 0 {
		err = rerun(syscall.CLONE_NEWNET) // user namespaces refused, but root may still unshare
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "test/olm runs in a private network namespace: %v\n", err)
		return 1
	}
	return 0
}

func rerun(flags uintptr) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, os.Args[1:]...) //nolint:gosec // this very test binary
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), privateNetworkEnv+"=1")
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
