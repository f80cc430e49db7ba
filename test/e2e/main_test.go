package e2e

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

var (
	env      *controlplane.Env
	policies *controllers.Policies
)

func TestMain(m *testing.M) {
	os.Exit(olmplay.Suite{
		Log:             logr.Discard(),
		Namespaces:      []string{globalNS, policyNS},
		PolicyNamespace: policyNS,
		SetUp: func(_ context.Context, e *controlplane.Env) (*rest.Config, error) {
			env = e
			return e.Config, nil
		},
		Started: func(p *controllers.Policies) { policies = p },
	}.Run(m))
}

// cluster is one test's namespace, where the test plays OLM's part.
type cluster struct{ *olmplay.Cluster }

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return &cluster{olmplay.NewCluster(t, env.Client, "e2e-")}
}
