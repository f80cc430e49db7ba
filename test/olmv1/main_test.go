package olmv1

import (
	"errors"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tollgate-dev/tollgate/test/framework/netns"
	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// privateNetworkEnv marks the test binary that already runs in its private network namespace.
const privateNetworkEnv = "TOLLGATE_OLMV1_PRIVATE_NETWORK"

// errNoOLMv1 says `make olmv1` has not built real OLM v1.
var errNoOLMv1 = errors.New("real OLM v1 not found: run `make olmv1`, or set TOLLGATE_OLMV1_BIN to a folder holding catalogd, operator-controller and crds/")

// olmv1Bin is the folder of OLM v1's binaries and CRDs; empty when they are not built.
var olmv1Bin string

func TestMain(m *testing.M) {
	netns.Main(privateNetworkEnv, func() int {
		olmv1Bin = process.FindBuild("TOLLGATE_OLMV1_BIN", "olmv1", "catalogd", "operator-controller", "crds")
		ctrl.SetLogger(logr.Discard())
		if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
			ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
		}
		return m.Run()
	})
}

// requireOLMv1 skips a test when real OLM v1 is not built, except in CI, where it fails.
func requireOLMv1(t *testing.T) {
	t.Helper()
	process.RequireBuild(t, olmv1Bin, errNoOLMv1)
}
