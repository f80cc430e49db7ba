package admission

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

var catalogSources = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "catalogsources"}

const (
	validPolicy      = "tollgate-catalogsource-valid"
	deprecatedPolicy = "tollgate-catalogsource-deprecated"
)

// warnings records the Warning headers of the API server's responses.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// catalogClient is a CatalogSource client of env whose responses' warnings go to the
// returned recorder.
func catalogClient(env *controlplane.Env, ns string) (dynamic.ResourceInterface, *warnings, error) {
	rec := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = rec
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("dynamic client: %w", err)
	}
	return dyn.Resource(catalogSources).Namespace(ns), rec, nil
}

// catalogSource is a CatalogSource with the given spec.
func catalogSource(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "CatalogSource",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// namespace creates a namespace for one test.
func namespace(ctx context.Context, env *controlplane.Env, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("create namespace: %w", err)
	}
	return ns.Name, nil
}

// applyPolicies creates what `kustomize build config/admission` renders and waits until the
// API server enforces both policies. warns says whether env's CatalogSource CRD serves the
// structured sources, where the deprecated policy warns about a legacy CatalogSource.
func applyPolicies(ctx context.Context, env *controlplane.Env, warns bool) error {
	objs, err := kustomize("config/admission")
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := env.Client.Create(ctx, obj); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return waitEnforced(ctx, env, warns)
}

// waitEnforced dry-runs a CatalogSource the valid policy denies and, when warns, one the
// deprecated policy warns about until both happen: the API server picks up a new policy after
// a moment.
func waitEnforced(ctx context.Context, env *controlplane.Env, warns bool) error {
	ns, err := namespace(ctx, env, "probe")
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		c, rec, err := catalogClient(env, ns)
		if err != nil {
			return err
		}
		dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		_, denyErr := c.Create(ctx, catalogSource("probe-invalid", map[string]any{"sourceType": "grpc", "image": "probe", "address": "probe:50051"}), dryRun)
		_, warnErr := c.Create(ctx, catalogSource("probe-legacy", map[string]any{"sourceType": "grpc", "image": "probe"}), dryRun)
		denied := denyErr != nil && strings.Contains(denyErr.Error(), validPolicy)
		warned := warnErr == nil && strings.Contains(strings.Join(rec.list(), "\n"), deprecatedPolicy)
		last = fmt.Sprintf("deny probe: %v; warn probe: %v, warnings %q", denyErr, warnErr, rec.list())
		if denied && (warned || !warns) {
			return nil
		}
		if denyErr != nil && !denied && !apierrors.IsInvalid(denyErr) {
			return fmt.Errorf("probe the valid policy: %w", denyErr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the admission policies were not enforced within a minute: %s", last)
}

var (
	upstreamPolicies    sync.Once
	upstreamPoliciesErr error
)

// applyPoliciesOnce applies the policies to upstream, whose CRD serves no structured source,
// the first time a test asks.
func applyPoliciesOnce(ctx context.Context, env *controlplane.Env) error {
	upstreamPolicies.Do(func() { upstreamPoliciesErr = applyPolicies(ctx, env, false) })
	return upstreamPoliciesErr
}
