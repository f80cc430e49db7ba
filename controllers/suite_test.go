package controllers_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// apiServer starts a real API server (and etcd) for one test, and a context that ends with
// it; the manager's log is discarded.
func apiServer(t *testing.T) (*controlplane.Env, context.Context) {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return env, ctx
}
