// Package manager is the process `tollgate run` starts: its flags, and the wiring of the
// controllers, the admin's policy sources, the decision log and the probes into one
// controller-runtime manager.
package manager

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

// Flags are the settings of the manager; AddFlags binds them to a command's flags.
type Flags struct {
	defaultMode      string
	globalCatalogNS  string
	takeOverApproval bool
	leaveDepsAuto    bool
	policyNamespace  string
	bundles          []string
	bundlePoll       time.Duration
	bundleTrust      policysource.BundleOptions // AllowInsecureHTTP and the verification key
	evalTimeout      time.Duration
	reevaluate       time.Duration
	workers          int
	qps              float32
	burst            int
	serving          controllers.ServingOptions
	decisionLog      decisionLogFlags
	olm              olmFlags
	zap              zap.Options
}

// AddFlags binds the manager's flags (the logger's among them) to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.addPolicyFlags(fs)
	fs.StringVar(&f.defaultMode, "default-mode", string(tollgatev1alpha1.DefaultMode), "mode of gates whose spec.mode is empty: Enforce (approve allowed InstallPlans) or Audit (decide and report only)")
	fs.StringVar(&f.globalCatalogNS, "global-catalog-namespace", input.DefaultGlobalCatalogNamespace, "namespace whose CatalogSources every Subscription can use")
	fs.BoolVar(&f.takeOverApproval, "take-over-approval", false, "switch Subscriptions with installPlanApproval: Automatic to Manual, so Tollgate can hold their upgrades")
	fs.BoolVar(&f.leaveDepsAuto, "leave-dependencies-automatic", false, "leave the Subscriptions OLM creates for the dependencies of plans Tollgate approved Automatic, as OLM creates them (by default they are switched to Manual, so that their upgrades are gated too)")
	fs.DurationVar(&f.reevaluate, "reevaluate-interval", controllers.DefaultReevaluate, "safety net: re-evaluate every gate this often even without a change (time-based rules need not: they say when to look again); 0 disables")
	fs.IntVar(&f.workers, "workers", controllers.DefaultWorkers, "how many Subscriptions are evaluated at once")
	fs.Float32Var(&f.qps, "kube-api-qps", -1, "requests per second the manager may send the API server; negative: no client-side limit, the API server's priority and fairness decide (the manager writes only what changed, but a catalog turning unhealthy changes every gate that sees it)")
	fs.IntVar(&f.burst, "kube-api-burst", 0, "requests the manager may send the API server in a burst, above a positive --kube-api-qps")
	fs.StringVar(&f.serving.MetricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint; 0 disables it")
	fs.BoolVar(&f.serving.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers allowed to get /metrics (TokenReview, SubjectAccessReview); false serves plain HTTP to anyone")
	fs.StringVar(&f.serving.ProbeAddr, "health-probe-bind-address", ":8081", "address of the /healthz (alive) and /readyz (policies loaded) probes")
	fs.BoolVar(&f.serving.LeaderElect, "leader-elect", false, "elect a leader, so only one replica acts")
	fs.StringVar(&f.serving.PprofAddr, "pprof-bind-address", "0", "address of Go's profiles (/debug/pprof/), for diagnosis; 0 disables it")
	f.decisionLog.addFlags(fs)
	f.olm.addFlags(fs)
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	f.zap.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
}

// addPolicyFlags binds the flags that choose and bound the policies.
func (f *Flags) addPolicyFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.policyNamespace, "policy-namespace", envOr("POD_NAMESPACE", policysource.DefaultNamespace), "namespace of the policy ConfigMaps (labelled tollgate.dev/policy=rego or =data)")
	fs.StringSliceVar(&f.bundles, "bundle", nil, "OPA bundle to load: a directory, a .tar.gz file, or an http(s) bundle server URL (repeatable)")
	fs.BoolVar(&f.bundleTrust.AllowInsecureHTTP, "allow-insecure-bundle-http", false, "allow --bundle servers over plain http (and redirects to http); refused by default")
	fs.StringVar(&f.bundleTrust.VerificationKey, "bundle-verification-key", "", "PEM public key (or HMAC secret), or a file holding it, to verify signed bundles with; every bundle must then be signed")
	fs.StringVar(&f.bundleTrust.VerificationKeyID, "bundle-verification-key-id", "default", "id of --bundle-verification-key, as the bundle signatures name it")
	fs.StringVar(&f.bundleTrust.SigningAlgorithm, "bundle-signing-alg", "RS256", "algorithm of the bundle signatures")
	fs.DurationVar(&f.bundlePoll, "bundle-poll-interval", policysource.DefaultBundlePollInterval, "how often to re-read --bundle sources (bundle servers are asked with If-None-Match)")
	fs.DurationVar(&f.evalTimeout, "evaluation-timeout", engine.DefaultTimeout, "deadline of one policy evaluation; a policy that runs longer denies with PolicyError")
}

// Options checks the flags and returns the controllers' options they give. Extensions is
// always set (catalogd's client, trusting --catalogd-ca-file); Run leaves out the OLM the
// cluster does not serve or --olm does not gate.
func (f *Flags) Options() (controllers.Options, error) {
	mode, err := tollgatev1alpha1.ParseMode(f.defaultMode)
	if err != nil {
		return controllers.Options{}, fmt.Errorf("invalid --default-mode %w", err)
	}
	if f.workers < 1 {
		return controllers.Options{}, fmt.Errorf("invalid --workers %d: at least 1", f.workers)
	}
	if f.evalTimeout <= 0 {
		return controllers.Options{}, fmt.Errorf("invalid --evaluation-timeout %s: it must be positive", f.evalTimeout)
	}
	catalogs, err := f.olm.catalogs()
	if err != nil {
		return controllers.Options{}, err
	}
	return controllers.Options{
		Input:                      input.Config{GlobalCatalogNamespace: f.globalCatalogNS, DefaultMode: mode},
		TakeOverApproval:           f.takeOverApproval,
		LeaveDependenciesAutomatic: f.leaveDepsAuto,
		Reevaluate:                 f.reevaluate,
		Workers:                    f.workers,
		PolicyNamespace:            f.policyNamespace,
		Engine:                     engine.Options{Timeout: f.evalTimeout},
		Extensions:                 catalogs,
		HeldRecheck:                f.olm.heldRecheck,
	}, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
