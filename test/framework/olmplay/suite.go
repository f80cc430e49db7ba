package olmplay

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// Suite is how a test package's TestMain runs the Tollgate manager on a real API server.
type Suite struct {
	// Log records the manager's log; with TOLLGATE_TEST_VERBOSE set it also goes to the terminal.
	Log logr.Logger
	// Namespaces are created before SetUp (OLM's global namespace, Tollgate's policy namespace).
	Namespaces []string
	// PolicyNamespace is where the manager reads its policies.
	PolicyNamespace string
	// SetUp runs once the control plane is up and the namespaces exist. It returns the
	// config the manager runs with.
	SetUp func(ctx context.Context, env *controlplane.Env) (*rest.Config, error)
	// Started, if set, receives the manager's policies before the tests run.
	Started func(*controllers.Policies)
	// Workers is how many Subscriptions the manager reconciles at once; zero means one.
	Workers int
}

// Run starts the control plane and the manager, runs the tests, stops both and returns the
// exit code for os.Exit.
func (s Suite) Run(m *testing.M) int {
	ctrl.SetLogger(s.logger())
	env, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := s.manager(ctx, env)
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

// logger is Log, and with TOLLGATE_TEST_VERBOSE set the terminal as well.
func (s Suite) logger() logr.Logger {
	if os.Getenv("TOLLGATE_TEST_VERBOSE") == "" {
		return s.Log
	}
	terminal := zap.New(zap.UseDevMode(true))
	if s.Log.GetSink() == nil { // logr.Discard()
		return terminal
	}
	return logr.New(teeSink{terminal.GetSink(), s.Log.GetSink()})
}

// manager prepares the API server and returns the manager, set up but not started.
func (s Suite) manager(ctx context.Context, env *controlplane.Env) (ctrl.Manager, error) {
	if err := apiextensionsv1.AddToScheme(env.Client.Scheme()); err != nil {
		return nil, err
	}
	for _, ns := range s.Namespaces {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	cfg, err := s.SetUp(ctx, env)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(s.PolicyNamespace),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return nil, err
	}
	policies, err := controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: s.PolicyNamespace, Workers: s.Workers})
	if err != nil {
		return nil, err
	}
	if s.Started != nil {
		s.Started(policies)
	}
	return mgr, nil
}

// teeSink logs to two sinks (the terminal and the test's record).
type teeSink struct{ a, b logr.LogSink }

func (t teeSink) Init(info logr.RuntimeInfo) { t.a.Init(info); t.b.Init(info) }
func (t teeSink) Enabled(level int) bool     { return t.a.Enabled(level) || t.b.Enabled(level) }
func (t teeSink) Info(level int, msg string, kv ...any) {
	t.a.Info(level, msg, kv...)
	t.b.Info(level, msg, kv...)
}
func (t teeSink) Error(err error, msg string, kv ...any) {
	t.a.Error(err, msg, kv...)
	t.b.Error(err, msg, kv...)
}
func (t teeSink) WithValues(kv ...any) logr.LogSink {
	return teeSink{t.a.WithValues(kv...), t.b.WithValues(kv...)}
}
func (t teeSink) WithName(name string) logr.LogSink {
	return teeSink{t.a.WithName(name), t.b.WithName(name)}
}
