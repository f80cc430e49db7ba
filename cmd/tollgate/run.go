package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tollgate-dev/tollgate/apis"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/input"
	"github.com/tollgate-dev/tollgate/kubeconn"
	"github.com/tollgate-dev/tollgate/memlimit"
	"github.com/tollgate-dev/tollgate/policysource"
)

// managerFlags are the settings of `tollgate run`.
type managerFlags struct {
	defaultMode      string
	globalCatalogNS  string
	takeOverApproval bool
	policyNamespace  string
	bundles          []string
	bundlePoll       time.Duration
	bundleTrust      policysource.BundleOptions // AllowInsecureHTTP and the verification key
	evalTimeout      time.Duration
	reevaluate       time.Duration
	workers          int
	qps              float32
	burst            int
	decisionLog      decisionLogFlags
}

func (f *managerFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.defaultMode, "default-mode", string(tollgatev1alpha1.DefaultMode), "mode of gates whose spec.mode is empty: Enforce (approve allowed InstallPlans) or Audit (decide and report only)")
	fs.StringVar(&f.globalCatalogNS, "global-catalog-namespace", input.DefaultGlobalCatalogNamespace, "namespace whose CatalogSources every Subscription can use")
	fs.BoolVar(&f.takeOverApproval, "take-over-approval", false, "switch Subscriptions with installPlanApproval: Automatic to Manual, so Tollgate can hold their upgrades")
	fs.StringVar(&f.policyNamespace, "policy-namespace", envOr("POD_NAMESPACE", policysource.DefaultNamespace), "namespace of the policy ConfigMaps (labelled tollgate.dev/policy=rego or =data)")
	fs.StringSliceVar(&f.bundles, "bundle", nil, "OPA bundle to load: a directory, a .tar.gz file, or an http(s) bundle server URL (repeatable)")
	fs.BoolVar(&f.bundleTrust.AllowInsecureHTTP, "allow-insecure-bundle-http", false, "allow --bundle servers over plain http (and redirects to http); refused by default")
	fs.StringVar(&f.bundleTrust.VerificationKey, "bundle-verification-key", "", "PEM public key (or HMAC secret), or a file holding it, to verify signed bundles with; every bundle must then be signed")
	fs.StringVar(&f.bundleTrust.VerificationKeyID, "bundle-verification-key-id", "default", "id of --bundle-verification-key, as the bundle signatures name it")
	fs.StringVar(&f.bundleTrust.SigningAlgorithm, "bundle-signing-alg", "RS256", "algorithm of the bundle signatures")
	fs.DurationVar(&f.bundlePoll, "bundle-poll-interval", policysource.DefaultBundlePollInterval, "how often to re-read --bundle sources (bundle servers are asked with If-None-Match)")
	fs.DurationVar(&f.evalTimeout, "evaluation-timeout", engine.DefaultTimeout, "deadline of one policy evaluation; a policy that runs longer denies with PolicyError")
	fs.DurationVar(&f.reevaluate, "reevaluate-interval", controllers.DefaultReevaluate, "safety net: re-evaluate every gate this often even without a change (time-based rules need not: they say when to look again); 0 disables")
	fs.IntVar(&f.workers, "workers", controllers.DefaultWorkers, "how many Subscriptions are evaluated at once")
	fs.Float32Var(&f.qps, "kube-api-qps", -1, "requests per second the manager may send the API server; negative: no client-side limit, the API server's priority and fairness decide (the manager writes only what changed, but a catalog turning unhealthy changes every gate that sees it)")
	fs.IntVar(&f.burst, "kube-api-burst", 0, "requests the manager may send the API server in a burst, above a positive --kube-api-qps")
	f.decisionLog.bind(fs)
}

func (f *managerFlags) options() (controllers.Options, error) {
	mode, err := parseMode(f.defaultMode)
	if err != nil {
		return controllers.Options{}, err
	}
	if f.workers < 1 {
		return controllers.Options{}, fmt.Errorf("invalid --workers %d: at least 1", f.workers)
	}
	if f.evalTimeout <= 0 {
		return controllers.Options{}, fmt.Errorf("invalid --evaluation-timeout %s: it must be positive", f.evalTimeout)
	}
	return controllers.Options{
		Input:            input.Config{GlobalCatalogNamespace: f.globalCatalogNS, DefaultMode: mode},
		TakeOverApproval: f.takeOverApproval,
		Reevaluate:       f.reevaluate,
		Workers:          f.workers,
		PolicyNamespace:  f.policyNamespace,
		Engine:           engine.Options{Timeout: f.evalTimeout},
	}, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func newRunCommand() *cobra.Command {
	var (
		flags   managerFlags
		cluster kubeconn.Flags
		serving controllers.ServingOptions
	)
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the manager: gate every Subscription and approve what policy allows",
		Example: `  # in a cluster (the Deployment in config/manager does this)
  tollgate run --leader-elect --policy-namespace tollgate-system

  # against a kubeconfig context, reporting only
  tollgate run --context staging --default-mode Audit --metrics-secure=false --metrics-bind-address :8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := flags.options()
			if err != nil {
				return err
			}
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			if soft := memlimit.Set("/sys/fs/cgroup"); soft > 0 {
				ctrl.Log.Info("Go memory limit set from the container's", "bytes", soft, "share", memlimit.Share)
			}
			cfg, err := cluster.RESTConfig()
			if err != nil {
				return err
			}
			cfg.QPS, cfg.Burst = flags.qps, max(flags.burst, int(flags.qps))
			return runManager(ctrl.SetupSignalHandler(), cfg, opts, flags, serving.ManagerOptions())
		},
	}
	flags.bind(cmd)
	cluster.AddManagerFlags(cmd)
	cmd.Flags().StringVar(&serving.MetricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint; 0 disables it")
	cmd.Flags().BoolVar(&serving.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers allowed to get /metrics (TokenReview, SubjectAccessReview); false serves plain HTTP to anyone")
	cmd.Flags().StringVar(&serving.ProbeAddr, "health-probe-bind-address", ":8081", "address of the /healthz (alive) and /readyz (policies loaded) probes")
	cmd.Flags().BoolVar(&serving.LeaderElect, "leader-elect", false, "elect a leader, so only one replica acts")
	cmd.Flags().StringVar(&serving.PprofAddr, "pprof-bind-address", "0", "address of Go's profiles (/debug/pprof/), for diagnosis; 0 disables it")
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	cmd.Flags().AddGoFlagSet(goFlags)
	return cmd
}

// runManager runs the controllers until ctx ends.
func runManager(ctx context.Context, cfg *rest.Config, opts controllers.Options, flags managerFlags, mgrOpts ctrl.Options) error {
	mgrOpts.Scheme = apis.NewScheme()
	mgrOpts.Cache = controllers.CacheOptions(opts.PolicyNamespace)
	// In a pod, controller-runtime finds its namespace itself; elsewhere the Lease goes beside
	// the policies, so --leader-elect works outside a cluster too.
	mgrOpts.LeaderElectionNamespace = envOr("POD_NAMESPACE", opts.PolicyNamespace)
	if len(flags.bundles) > 0 {
		// Every location must load now: the manager does not start without the admin's policy.
		bundleOpts := flags.bundleTrust
		bundleOpts.PollInterval = flags.bundlePoll
		src, err := policysource.LoadBundles(ctx, flags.bundles, bundleOpts)
		if err != nil {
			return err
		}
		opts.Bundles, opts.BundlesChanged = src.Bundles, src.Changed()
	}
	decisionLog, err := flags.decisionLog.open(flags.bundles, opts.Bundles)
	if err != nil {
		return err
	}
	opts.DecisionLog = decisionLog
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	policies, err := controllers.Setup(ctx, mgr, opts)
	if err != nil {
		return err
	}
	if err := controllers.AddHealthChecks(mgr, policies); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
