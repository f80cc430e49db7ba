package manager

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/manager/memlimit"
)

// Run sets the process' logger and memory limit, and runs the controllers against the API
// server of cfg until ctx ends. It gates the OLM --olm names, which the API server must serve
// (auto: each one served). Every --bundle location must load first: the manager does not
// start without the admin's policy.
func (f *Flags) Run(ctx context.Context, cfg *rest.Config) error {
	opts, err := f.Options()
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	if soft := memlimit.Set("/sys/fs/cgroup"); soft > 0 {
		ctrl.Log.Info("Go memory limit set from the container's", "bytes", soft, "share", memlimit.Share)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = f.qps, max(f.burst, int(f.qps))
	olm, err := f.detectOLM(cfg)
	if err != nil {
		return err
	}
	opts.SkipSubscriptions = !olm.v0
	if !olm.v1 {
		opts.Extensions = nil
	}
	if len(f.bundles) > 0 {
		bundleOpts := f.bundleTrust
		bundleOpts.PollInterval = f.bundlePoll
		src, err := policysource.LoadBundles(ctx, f.bundles, bundleOpts)
		if err != nil {
			return err
		}
		opts.Bundles, opts.BundlesChanged = src.Bundles, src.Changed()
	}
	if opts.DecisionLog, err = f.decisionLog.open(f.bundles, opts.Bundles); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, f.managerOptions(opts.PolicyNamespace, olm.v0))
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

// detectOLM asks the API server which OLM it serves, and returns what --olm gates of it.
func (f *Flags) detectOLM(cfg *rest.Config) (olmChoice, error) {
	s, err := discoverOLM(cfg)
	if err != nil {
		return olmChoice{}, err
	}
	olm, err := chooseOLM(f.olm.mode, s)
	if err != nil {
		return olm, err
	}
	ctrl.Log.Info("gating the upgrades of "+olm.String(), "olm", f.olm.mode)
	return olm, nil
}

// managerOptions are controller-runtime's options: serving, scheme, cache and the Lease. v0
// says whether OLM v0 is gated: without it, no CSV is cached.
func (f *Flags) managerOptions(policyNamespace string, v0 bool) ctrl.Options {
	o := f.serving.ManagerOptions()
	o.Scheme = apis.NewScheme()
	o.Cache = controllers.CacheOptionsFor(policyNamespace, v0)
	// In a pod, controller-runtime finds its namespace itself; elsewhere the Lease goes beside
	// the policies, so --leader-elect works outside a cluster too.
	o.LeaderElectionNamespace = envOr("POD_NAMESPACE", policyNamespace)
	return o
}
