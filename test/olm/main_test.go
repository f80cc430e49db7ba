package olm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// errNoOLM says `make olm` has not built real OLM.
var errNoOLM = errors.New("real OLM not found: run `make olm` (or `make test`, which builds it), or set TOLLGATE_OLM_BIN to a folder holding catalog, olm, opm and crds/")

// olmBin is the folder of OLM's binaries and CRDs; empty when they are not built.
var olmBin string

func TestMain(m *testing.M) {
	if !inPrivateNetwork() {
		os.Exit(runInPrivateNetwork())
	}
	if err := loopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	olmBin, _ = findOLM()
	ctrl.SetLogger(logr.Discard())
	if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
	code := m.Run()
	if cliPath != "" {
		_ = os.RemoveAll(filepath.Dir(cliPath))
	}
	os.Exit(code)
}

// findOLM returns TOLLGATE_OLM_BIN when set (the Makefile sets it), otherwise the newest
// build under bin/olm.
func findOLM() (string, error) {
	dirs := []string{os.Getenv("TOLLGATE_OLM_BIN")}
	if found, _ := filepath.Glob(repo.Path("bin", "olm", "*")); len(found) > 0 {
		dirs = append(dirs, found[len(found)-1])
	}
	for _, dir := range dirs {
		if dir != "" && complete(dir) {
			return dir, nil
		}
	}
	return "", errNoOLM
}

func complete(dir string) bool {
	for _, name := range []string{"catalog", "olm", "opm", "crds"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// requireOLM skips a test when real OLM is not built, except in CI, where it fails.
func requireOLM(t *testing.T) {
	t.Helper()
	if olmBin != "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(errNoOLM)
	}
	t.Skip(errNoOLM)
}
