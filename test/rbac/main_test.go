package rbac

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
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
	os.Exit(olmplay.Suite{
		Log:             funcr.New(logs.add, funcr.Options{}),
		Namespaces:      []string{globalNS, policyNS},
		PolicyNamespace: policyNS,
		SetUp:           setUp,
	}.Run(m))
}

// setUp applies config/rbac and returns the config of Tollgate's ServiceAccount (impersonated).
func setUp(ctx context.Context, e *controlplane.Env) (*rest.Config, error) {
	env = e
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
	return cfg, nil
}
