package soak

import (
	"context"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

const (
	globalNS = "olm"
	policyNS = "tollgate-system"
)

// env is the control plane the manager runs on; the checker watches it with a client of
// its own.
var env *controlplane.Env

func TestMain(m *testing.M) {
	os.Exit(olmplay.Suite{
		Log:             logr.Discard(),
		Namespaces:      []string{globalNS, policyNS},
		PolicyNamespace: policyNS,
		// As many workers as the manager runs with by default: Subscriptions of one
		// namespace (a bundled plan's) are decided concurrently.
		Workers: controllers.DefaultWorkers,
		SetUp: func(_ context.Context, e *controlplane.Env) (*rest.Config, error) {
			env = e
			return e.Config, nil
		},
	}.Run(m))
}
