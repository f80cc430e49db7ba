package olm

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// applyRBAC applies config/rbac: the ServiceAccount and the permissions Tollgate ships with.
func (w *world) applyRBAC() {
	w.t.Helper()
	objs, err := controlplane.Kustomize("config/rbac")
	require.NoError(w.t, err)
	for _, obj := range objs {
		require.NoError(w.t, w.c.Create(w.ctx, obj), "apply %s %s", obj.GetKind(), obj.GetName())
	}
}

// manager is Tollgate's manager running in-process, as a ServiceAccount (impersonated).
type manager struct {
	cancel context.CancelFunc
	done   chan error
}

// startManager runs Tollgate's manager with opts and the defaults of `tollgate run`, as the
// ServiceAccount config/rbac creates; the test's end stops it.
func (w *world) startManager(opts controllers.Options) {
	w.t.Helper()
	w.startManagerAs("system:serviceaccount:"+policyNS+":"+serviceAccount, opts)
}

// startManagerAs runs the manager as user.
func (w *world) startManagerAs(user string, opts controllers.Options) {
	w.t.Helper()
	require.Nil(w.t, w.manager, "a manager already runs")
	cfg := rest.CopyConfig(w.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(opts.PolicyNamespace),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Every test runs a manager of its own in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(w.t, err)
	ctx, cancel := context.WithCancel(w.ctx)
	_, err = controllers.Setup(ctx, mgr, opts)
	require.NoError(w.t, err)
	m := &manager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	w.manager = m
	w.t.Cleanup(w.stopManager)
}

// stopManager stops the running manager, if any, and waits until it has stopped.
func (w *world) stopManager() {
	w.t.Helper()
	m := w.manager
	if m == nil {
		return
	}
	w.manager = nil
	m.cancel()
	select {
	case err := <-m.done:
		require.NoError(w.t, err, "manager")
	case <-time.After(wait):
		w.t.Errorf("manager did not stop within %s", wait)
	}
}

// defaultOptions are `tollgate run`'s defaults with config/rbac's policy namespace.
func defaultOptions() controllers.Options {
	return controllers.Options{PolicyNamespace: policyNS}
}
