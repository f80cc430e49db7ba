// Package controlplane starts a real kube-apiserver and etcd for tests (controller-runtime
// envtest) with Tollgate's CRDs and the OLM CRDs installed.
//
// The binaries are the ones `make controlplane` builds into bin/k8s; `make test` builds
// them first and points KUBEBUILDER_ASSETS at them.
package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/apis"
)

// ErrNoAssets says the control plane binaries have not been built.
var ErrNoAssets = errors.New("kube-apiserver and etcd not found: run `make controlplane` (or `make test`, which builds them), or set KUBEBUILDER_ASSETS to a folder holding them")

// Env is a running control plane.
type Env struct {
	Config *rest.Config
	Client client.Client
	env    *envtest.Environment
}

// Options change what Start installs.
type Options struct {
	// CRDDirs replaces the default CRD folders (config/crd/bases and config/crd/olm).
	CRDDirs []string
}

// RepoRoot is the root of the Tollgate source tree.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Assets returns the folder holding kube-apiserver and etcd: KUBEBUILDER_ASSETS when set,
// otherwise the newest build under bin/k8s.
func Assets() (string, error) {
	dirs := []string{os.Getenv("KUBEBUILDER_ASSETS")}
	if found, _ := filepath.Glob(filepath.Join(RepoRoot(), "bin", "k8s", "*")); len(found) > 0 {
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
		root := RepoRoot()
		dirs = []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "config", "crd", "olm")}
	}
	scheme := apis.NewScheme()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     dirs,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("client for control plane: %w", err)
	}
	return &Env{Config: cfg, Client: c, env: env}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

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
