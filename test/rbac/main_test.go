package rbac

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/controlplane"
)

const (
	globalNS = "olm"
	// policyNS and serviceAccount are where config/rbac puts Tollgate.
	policyNS       = "tollgate-system"
	serviceAccount = "tollgate-manager"
	// manager is the user name of Tollgate's ServiceAccount.
	manager = "system:serviceaccount:" + policyNS + ":" + serviceAccount
)

var (
	env *controlplane.Env
	// asManager is a client that acts as Tollgate's ServiceAccount.
	asManager client.Client
	logs      logLines
)

// logLines keeps the manager's log, so a test can check what it told the admins.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logLines) containing(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	log := funcr.New(logs.add, funcr.Options{})
	if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
		log = logr.New(teeSink{zap.New(zap.UseDevMode(true)).GetSink(), log.GetSink()})
	}
	ctrl.SetLogger(log)
	var err error
	if env, err = controlplane.Start(controlplane.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := setUp(ctx)
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

// setUp applies config/rbac and returns a manager that runs as Tollgate's ServiceAccount.
func setUp(ctx context.Context) (ctrl.Manager, error) {
	if err := apiextensionsv1.AddToScheme(env.Client.Scheme()); err != nil {
		return nil, err
	}
	for _, ns := range []string{globalNS, policyNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	objs, err := kustomize("config/rbac")
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if err := env.Client.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: manager}
	if asManager, err = client.New(cfg, client.Options{Scheme: env.Client.Scheme()}); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(policyNS),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return nil, err
	}
	if _, err := controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: policyNS}); err != nil {
		return nil, err
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
