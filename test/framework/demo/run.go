package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// policyNamespace is where the manager looks for policy ConfigMaps; the demo adds none.
const policyNamespace = policysource.DefaultNamespace

// Options change how Run tells the story.
type Options struct {
	// Out receives the story; Err the manager's log (with Verbose) and make's progress.
	Out, Err io.Writer
	// Keep leaves the control plane and the manager running, with a kubeconfig to explore
	// them, until ctx ends.
	Keep bool
	// Verbose shows the manager's log on Err.
	Verbose bool
}

// Run starts a control plane and the manager, plays the story, and stops both (with Keep,
// once ctx ends). It builds the control plane binaries first when they are missing.
func Run(ctx context.Context, opts Options) (err error) {
	n := &narrator{w: opts.Out, start: time.Now()}
	if err := ensureControlPlane(ctx, opts.Err); err != nil {
		return err
	}

	n.step("Start a local control plane")
	env, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		return fmt.Errorf("%w (rebuild the binaries with `make controlplane`)", err)
	}
	defer func() {
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop the control plane: %w", stopErr)
		}
	}()
	n.say("kube-apiserver at %s, with the OLM and Tollgate CRDs installed", env.Config.Host)

	n.step("Start the Tollgate manager (in this process)")
	if opts.Verbose {
		ctrl.SetLogger(zap.New(zap.WriteTo(opts.Err)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	mgr, err := startManager(ctx, env.Config)
	if err != nil {
		return err
	}
	defer func() {
		if mgrErr := mgr.stop(); mgrErr != nil && err == nil {
			err = fmt.Errorf("the manager failed: %w", mgrErr)
		}
	}()
	n.say("gating every Subscription in Enforce mode, with the embedded policies")

	s := &story{World: &World{Client: env.Client, n: n, manager: mgr}, n: n, out: opts.Out, mgr: mgr}
	if err := s.play(ctx); err != nil {
		return err
	}
	if !opts.Keep {
		n.step("Clean up")
		n.say("stopping the manager and the control plane; nothing is left running")
		return nil
	}
	return s.keep(ctx, env)
}

// manager is the Tollgate manager running in this process.
type manager struct {
	input    input.Config
	policies *controllers.Policies // the policies it runs, for explain
	cancel   context.CancelFunc
	done     chan struct{} // closed when it has stopped; then err is set
	err      error
}

// startManager runs the controllers as `tollgate run --default-mode Enforce` would, without
// metrics, probes or leader election.
func startManager(ctx context.Context, cfg *rest.Config) (*manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 apis.NewScheme(),
		Cache:                  controllers.CacheOptions(policyNamespace),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// A test may run the demo more than once in a process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	m := &manager{
		input: input.Config{GlobalCatalogNamespace: CatalogNamespace, DefaultMode: tollgatev1alpha1.ModeEnforce},
		done:  make(chan struct{}),
	}
	ctx, m.cancel = context.WithCancel(ctx)
	m.policies, err = controllers.Setup(ctx, mgr, controllers.Options{
		Input:           m.input,
		Reevaluate:      time.Minute,
		PolicyNamespace: policyNamespace,
		Engine:          engine.Options{Timeout: engine.DefaultTimeout},
	})
	if err != nil {
		m.cancel()
		return nil, err
	}
	go func() {
		defer close(m.done)
		m.err = mgr.Start(ctx)
	}()
	return m, nil
}

// stop stops the manager and returns why it failed, if it did.
func (m *manager) stop() error {
	m.cancel()
	<-m.done
	return m.err
}

// stopErr is why the manager stopped on its own; call it once done is closed.
func (m *manager) stopErr() error {
	if m.err == nil {
		return errors.New("it returned without an error")
	}
	return m.err
}

// ensureControlPlane builds the control plane binaries when they are missing, with make's
// progress on w, or says how to.
func ensureControlPlane(ctx context.Context, w io.Writer) error {
	if _, err := controlplane.Assets(); err == nil {
		return nil
	}
	root := repo.Root()
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		return fmt.Errorf("%w; in a Tollgate checkout: make controlplane", controlplane.ErrNoAssets)
	}
	fmt.Fprintf(w, "The control plane binaries are missing: building them with `make controlplane` in %s (about 6 minutes, once).\n", root)
	cmd := exec.CommandContext(ctx, "make", "-C", root, "controlplane") //nolint:gosec // make in the source tree this package was built from
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make controlplane failed (%w): run it yourself to see why", err)
	}
	_, err := controlplane.Assets()
	return err
}

// keep leaves the control plane and the manager running until ctx ends, and says how to
// explore them.
func (s *story) keep(ctx context.Context, env *controlplane.Env) error {
	dir, err := os.MkdirTemp("", "tollgate-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		return err
	}
	kubectl := controlplane.Kubectl()
	if kubectl == "" {
		kubectl = "kubectl"
	}
	s.n.step("The control plane and the manager stay up (--keep)")
	fmt.Fprintf(s.out, `   Explore it from another terminal:

     export KUBECONFIG=%s
     %s get upgradegates -A
     %s get upgradegate -n %s %s -o yaml
     %s get installplans,subscriptions,operatorconditions -n %s
     go -C %s run ./cmd/tollgate explain -n %s %s

   Press Ctrl-C to stop it and remove everything.
`, kubeconfig, kubectl, kubectl, Namespace, Subscription, kubectl, Namespace, repo.Root(), Namespace, Subscription)
	select {
	case <-ctx.Done():
	case <-s.mgr.done:
		return fmt.Errorf("the manager stopped: %w", s.mgr.stopErr())
	}
	fmt.Fprintln(s.out, "\nStopping.")
	return nil
}
