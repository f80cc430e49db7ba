// Package controlplane starts a real kube-apiserver and etcd for tests (controller-runtime
// envtest) with Tollgate's CRDs and the OLM CRDs installed.
//
// The binaries are the ones `make controlplane` builds into bin/k8s; `make test` builds
// them first and points KUBEBUILDER_ASSETS at them.
package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// ErrNoAssets says the control plane binaries have not been built.
var ErrNoAssets = errors.New("kube-apiserver and etcd not found: run `make controlplane` (or `make test`, which builds them), or set KUBEBUILDER_ASSETS to a folder holding them")

// Env is a running control plane.
type Env struct {
	Config *rest.Config
	Client client.Client
	env    *envtest.Environment
	// certDir holds the API server's serving certificates. Start owns it (rather than leaving
	// it to envtest, which deletes it when the API server stops), so the API server can be
	// stopped and started again with the certificates Config trusts.
	certDir string
}

// Options change what Start installs.
type Options struct {
	// CRDDirs replaces the default CRD folders (config/crd/bases and config/crd/olm).
	CRDDirs []string
	// APIServerFlags are set on the kube-apiserver's command line, beside envtest's own.
	APIServerFlags map[string]string
}

// Assets returns the folder holding kube-apiserver and etcd: KUBEBUILDER_ASSETS when set,
// otherwise the newest build under bin/k8s.
func Assets() (string, error) {
	dirs := []string{os.Getenv("KUBEBUILDER_ASSETS")}
	if found, _ := filepath.Glob(repo.Path("bin", "k8s", "*")); len(found) > 0 {
		dirs = append(dirs, found[len(found)-1])
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "etcd")); err == nil {
				return dir, nil
			}
		}
	}
	return "", ErrNoAssets
}

// Start runs a control plane with the CRDs installed and returns a client for it.
func Start(opts Options) (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	dirs := opts.CRDDirs
	if dirs == nil {
		root := repo.Root()
		dirs = []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "config", "crd", "olm")}
	}
	certDir, err := os.MkdirTemp("", "tollgate-apiserver-")
	if err != nil {
		return nil, fmt.Errorf("folder for the API server's certificates: %w", err)
	}
	scheme := apis.NewScheme()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     dirs,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
	for flag, value := range opts.APIServerFlags {
		env.ControlPlane.APIServer.Configure().Set(flag, value)
	}
	cfg, err := env.Start()
	if err != nil {
		_ = os.RemoveAll(certDir)
		return nil, fmt.Errorf("start control plane from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		_ = os.RemoveAll(certDir)
		return nil, fmt.Errorf("client for control plane: %w", err)
	}
	return &Env{Config: cfg, Client: c, env: env, certDir: certDir}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	err := e.env.Stop()
	return errors.Join(err, os.RemoveAll(e.certDir))
}

// StopAPIServer stops the kube-apiserver alone, as a kubelet stops a static pod: SIGTERM,
// then SIGKILL once grace has passed (with clients watching, its graceful shutdown outlasted
// 20 seconds in this repository's tests), and waits until it has exited; etcd keeps running with everything stored.
// Until StartAPIServer, every request fails to connect.
func (e *Env) StopAPIServer(grace time.Duration) error {
	apiServer := e.env.ControlPlane.APIServer
	pid, err := e.apiServerPID()
	if err != nil {
		return err
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return fmt.Errorf("find kube-apiserver (pid %d): %w", pid, err)
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop kube-apiserver (pid %d): %w", pid, err)
	}
	if !waitGone(pid, grace) {
		_ = proc.Signal(syscall.SIGKILL)
		if !waitGone(pid, apiServer.StopTimeout) {
			return fmt.Errorf("kube-apiserver (pid %d) still runs after SIGKILL", pid)
		}
	}
	// envtest reaped it; its Stop now only cleans up (it signals a process it has not yet
	// marked as exited, hence the retries).
	deadline := time.Now().Add(apiServer.StopTimeout)
	for {
		err := apiServer.Stop()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stop kube-apiserver: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// apiServerPID finds the control plane's kube-apiserver among the processes: the one whose
// --cert-dir is this control plane's own folder.
func (e *Env) apiServerPID() (int, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("find kube-apiserver: %w", err)
	}
	want := []byte("--cert-dir=" + e.certDir + "\x00")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, want) && strings.HasSuffix(strings.SplitN(string(cmdline), "\x00", 2)[0], "kube-apiserver") {
			return pid, nil
		}
	}
	return 0, errors.New("find kube-apiserver: no process serves with --cert-dir=" + e.certDir)
}

// waitGone waits up to d until process pid is gone (exited and reaped).
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); os.IsNotExist(err) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// StartAPIServer starts the kube-apiserver StopAPIServer stopped, on the same address, with
// the same serving certificate and client CA, so Config (and every client made from it, or
// from a user added before) works again; it returns once the API server is healthy.
func (e *Env) StartAPIServer() error {
	if err := e.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("start kube-apiserver again: %w", err)
	}
	return nil
}

// Kubeconfig writes a kubeconfig for the control plane's admin user to path.
func (e *Env) Kubeconfig(path string) error {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("render kubeconfig: %w", err)
	}
	return os.WriteFile(path, data, 0o600)
}

// Kubectl is the path of the kubectl built beside kube-apiserver, or "" when absent.
func Kubectl() string {
	dir, err := Assets()
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// BoundedClient is a client of the API server whose every request gives up after timeout, so
// that a server that stops answering fails a test instead of hanging it.
func (e *Env) BoundedClient(timeout time.Duration) (client.Client, error) {
	cfg := rest.CopyConfig(e.Config)
	cfg.Timeout = timeout
	return client.New(cfg, client.Options{Scheme: e.Client.Scheme()})
}
