package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/controlplane"
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
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
	var err error
	if env, err = controlplane.Start(controlplane.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := apiextensionsv1.AddToScheme(env.Client.Scheme()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ns := range []string{globalNS, policyNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(policyNS),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	policies, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: policyNS})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return code
}
