package controllers_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// TestEveryApprovalIsLoggedWhenTheManagerStopsRightAfterIt stops the manager at the worst
// moment for the decision log, many times: the approval's patch has succeeded, its event is
// not written yet, and the manager is stopping, with the decision log already refusing new
// approvals. Every approval is in the log file all the same.
func TestEveryApprovalIsLoggedWhenTheManagerStopsRightAfterIt(t *testing.T) {
	env, ctx := apiServer(t)
	path := filepath.Join(t.TempDir(), "decisions.log")
	for i := range 20 {
		plan := firstInstallWaiting(t, ctx, env.Client)
		runUntilApproved(t, ctx, env.Config, path, plan)

		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan))
		require.True(t, plan.Spec.Approved, "round %d: the manager approved %s", i, plan.Name)
		assert.True(t, loggedApproval(t, path, plan), "round %d: the approval of %s/%s is in the log", i, plan.Namespace, plan.Name)
	}
}

// runUntilApproved runs a manager that logs into the file at path until it has approved
// plan: the moment the approval's patch returns, before the approval is logged, the manager
// is told to stop, and the patch returns only once the decision log refuses new approvals.
// It returns once the manager has stopped.
func runUntilApproved(t *testing.T, ctx context.Context, cfg *rest.Config, path string, plan *v1alpha1.InstallPlan) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
	require.NoError(t, err)
	log := decisionlog.New(sink, decisionlog.Options{Log: logr.Discard()})
	stopAt := func(approved client.Object) {
		if approved.GetNamespace() != plan.Namespace || approved.GetName() != plan.Name {
			return
		}
		cancel()
		_ = wait.PollUntilContextTimeout(context.Background(), time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return refusing(log), nil
		})
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: apis.NewScheme(), Cache: controllers.CacheOptions("tollgate-system"),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		NewClient:  stoppingAfterApproval(stopAt),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	_, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: "tollgate-system", DecisionLog: log})
	require.NoError(t, err)
	require.NoError(t, mgr.Start(ctx))
}

// stoppingAfterApproval is the manager's client, which calls stop with each InstallPlan it
// has approved, once the API server has taken the approval.
func stoppingAfterApproval(stop func(client.Object)) func(*rest.Config, client.Options) (client.Client, error) {
	return func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		c, err := client.NewWithWatch(cfg, opts)
		if err != nil {
			return nil, err
		}
		return interceptor.NewClient(c, interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if err := c.Patch(ctx, obj, patch, opts...); err != nil {
					return err
				}
				if plan, ok := obj.(*v1alpha1.InstallPlan); ok && plan.Spec.Approved {
					stop(plan)
				}
				return nil
			},
		}), nil
	}
}

// refusing says whether log refuses new approvals: it does once the manager stops it.
func refusing(log *decisionlog.Logger) bool {
	release, ok := log.Hold()
	if ok {
		release()
	}
	return !ok
}

// loggedApproval says whether the decision log at path holds the approval of plan.
func loggedApproval(t *testing.T, path string, plan *v1alpha1.InstallPlan) bool {
	t.Helper()
	logged, err := decisionlog.ReadFile(path)
	require.NoError(t, err)
	for _, l := range logged {
		res, _ := l.Event.Result.(map[string]any)
		key, _ := res["installPlan"].(map[string]any)
		if l.Event.Path == decisionlog.PathApproval && key["namespace"] == plan.Namespace && key["name"] == plan.Name {
			return true
		}
	}
	return false
}
