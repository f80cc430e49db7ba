package olm

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tollgate-dev/tollgate/test/framework/netns"
	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// privateNetworkEnv marks the test binary that already runs in its private network namespace.
// OLM's operators bind :8080 and :8443 whatever their flags: there they collide with nothing
// else on the machine, and nothing there can be reached from outside.
const privateNetworkEnv = "TOLLGATE_OLM_PRIVATE_NETWORK"

// errNoOLM says `make olm` has not built real OLM.
var errNoOLM = errors.New("real OLM not found: run `make olm` (or `make test`, which builds it), or set TOLLGATE_OLM_BIN to a folder holding catalog, olm, opm and crds/")

// olmBin is the folder of OLM's binaries and CRDs; empty when they are not built.
var olmBin string

func TestMain(m *testing.M) {
	netns.Main(privateNetworkEnv, func() int {
		olmBin = process.FindBuild("TOLLGATE_OLM_BIN", "olm", "catalog", "olm", "opm", "crds")
		ctrl.SetLogger(logr.Discard())
		if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
			ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
		}
		code := m.Run()
		if cliPath != "" {
			_ = os.RemoveAll(filepath.Dir(cliPath))
		}
		return code
	})
}

// requireOLM skips a test when real OLM is not built, except in CI, where it fails.
func requireOLM(t *testing.T) {
	t.Helper()
	process.RequireBuild(t, olmBin, errNoOLM)
}
