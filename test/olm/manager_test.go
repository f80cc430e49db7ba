package olm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/controlplane"
)

// startManager applies config/rbac and runs Tollgate's manager in-process as its
// ServiceAccount (impersonated), with the defaults of `tollgate run`; the test's end stops it.
func startManager(t *testing.T, env *controlplane.Env) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	objs, err := controlplane.Kustomize("config/rbac")
	require.NoError(t, err)
	for _, obj := range objs {
		require.NoError(t, env.Client.Create(ctx, obj), "apply %s %s", obj.GetKind(), obj.GetName())
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + policyNS + ":" + serviceAccount}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(policyNS),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Every test runs a manager of its own in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	_, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: policyNS})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "manager")
		case <-time.After(wait):
			t.Errorf("manager did not stop within %s", wait)
		}
	})
}
