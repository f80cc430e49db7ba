package manager

import (
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

// parsed binds the manager's flags to a new flag set and parses args.
func parsed(t *testing.T, args ...string) *Flags {
	t.Helper()
	f := &Flags{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	return f
}

func TestTheDefaultsAreTheControllersDefaults(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	opts, err := parsed(t).Options()
	require.NoError(t, err)
	assert.NotNil(t, opts.Extensions, "catalogd's client, left out by Run where OLM v1 is not gated")
	opts.Extensions = nil
	assert.Equal(t, controllers.Options{
		Input:           input.Config{GlobalCatalogNamespace: input.DefaultGlobalCatalogNamespace, DefaultMode: tollgatev1alpha1.DefaultMode},
		Reevaluate:      controllers.DefaultReevaluate,
		Workers:         controllers.DefaultWorkers,
		PolicyNamespace: policysource.DefaultNamespace,
		Engine:          engine.Options{Timeout: engine.DefaultTimeout},
		HeldRecheck:     controllers.DefaultHeldRecheck,
	}, opts)
}

func TestThePolicyNamespaceDefaultsToThePods(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "gatekeeping")
	opts, err := parsed(t).Options()
	require.NoError(t, err)
	assert.Equal(t, "gatekeeping", opts.PolicyNamespace)
	assert.Equal(t, "gatekeeping", parsed(t).managerOptions(opts.PolicyNamespace, true).LeaderElectionNamespace)
}

func TestFlagsReachTheOptions(t *testing.T) {
	opts, err := parsed(t, "--default-mode", "Audit", "--global-catalog-namespace", "catalogs", "--take-over-approval",
		"--workers", "3", "--reevaluate-interval", "0", "--evaluation-timeout", "5s", "--policy-namespace", "site").Options()
	require.NoError(t, err)
	assert.Equal(t, tollgatev1alpha1.ModeAudit, opts.Input.DefaultMode)
	assert.Equal(t, "catalogs", opts.Input.GlobalCatalogNamespace)
	assert.True(t, opts.TakeOverApproval)
	assert.Equal(t, 3, opts.Workers)
	assert.Zero(t, opts.Reevaluate)
	assert.Equal(t, 5*time.Second, opts.Engine.Timeout)
	assert.Equal(t, "site", opts.PolicyNamespace)
}

func TestInvalidFlagsSayWhatToGive(t *testing.T) {
	for want, args := range map[string][]string{
		`invalid --default-mode "enforce": use Enforce or Audit`: {"--default-mode", "enforce"},
		"invalid --workers 0: at least 1":                        {"--workers", "0"},
		"invalid --evaluation-timeout 0s: it must be positive":   {"--evaluation-timeout", "0"},
		"invalid --evaluation-timeout -1s: it must be positive":  {"--evaluation-timeout", "-1s"},
	} {
		_, err := parsed(t, args...).Options()
		assert.EqualError(t, err, want)
	}
}

func TestTheManagerServesWhatItsFlagsSay(t *testing.T) {
	o := parsed(t, "--metrics-bind-address", ":9443", "--health-probe-bind-address", ":9081", "--leader-elect", "--pprof-bind-address", ":6060").managerOptions("tollgate-system", true)
	assert.Equal(t, ":9443", o.Metrics.BindAddress)
	assert.True(t, o.Metrics.SecureServing)
	assert.Equal(t, ":9081", o.HealthProbeBindAddress)
	assert.True(t, o.LeaderElection)
	assert.Equal(t, controllers.LeaderElectionID, o.LeaderElectionID)
	assert.Equal(t, ":6060", o.PprofBindAddress)
	assert.NotNil(t, o.Scheme)
	assert.False(t, parsed(t, "--metrics-secure=false").managerOptions("x", true).Metrics.SecureServing)
}

func TestWithoutADecisionLogThereIsNoLogger(t *testing.T) {
	l, err := parsed(t).decisionLog.open(nil, nil)
	require.NoError(t, err)
	assert.Nil(t, l)
	_, err = parsed(t, "--decision-log", "ftp://example.com/logs").decisionLog.open(nil, nil)
	assert.Error(t, err, "a target it cannot open")
}

func TestBundleRevisionsNameBundlesWithoutCredentials(t *testing.T) {
	b := func(rev string) *bundle.Bundle { return &bundle.Bundle{Manifest: bundle.Manifest{Revision: rev}} }
	got := bundleRevisions(
		[]string{"https://user:secret@bundles.example.com/site.tar.gz?token=x#frag", "packs/window", "missing"},
		[]*bundle.Bundle{b("r1"), b("r2")},
	)
	assert.Equal(t, map[string]string{"https://bundles.example.com/site.tar.gz": "r1", "packs/window": "r2"}, got)
	assert.Empty(t, bundleRevisions([]string{"a"}, []*bundle.Bundle{nil}), "a bundle not loaded has no revision")
}
