package olmv1

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const (
	// policyNS and serviceAccount are config/rbac's: Tollgate's namespace and the
	// ServiceAccount it runs as, with the permissions it ships with.
	policyNS       = "tollgate-system"
	serviceAccount = "tollgate-manager"
	// widgets is the kind the sample bundles provide (olm.gvk), the operands of an extension.
	widgetGroup  = "demo.tollgate.io"
	widgetPlural = "widgets"
)

// tollgate is Tollgate's manager running in-process as its ServiceAccount.
type tollgate struct {
	cancel context.CancelFunc
	done   chan error
}

// applyRBAC applies config/rbac in Tollgate's namespace (newWorld creates it).
func (w *world) applyRBAC() {
	w.t.Helper()
	objs, err := controlplane.Kustomize("config/rbac")
	require.NoError(w.t, err)
	for _, obj := range objs {
		require.NoError(w.t, w.c.Create(w.ctx, obj), "apply %s %s", obj.GetKind(), obj.GetName())
	}
}

// startTollgate runs Tollgate's manager with the defaults of `tollgate run`, gating OLM v1
// with catalogd's content read trusting the world's CA, as config/rbac's ServiceAccount.
func (w *world) startTollgate() {
	w.t.Helper()
	require.Nil(w.t, w.tollgate, "Tollgate already runs")
	cfg := rest.CopyConfig(w.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + policyNS + ":" + serviceAccount}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     apis.NewScheme(),
		Cache:      controllers.CacheOptionsFor(policyNS, false), // OLM v1 alone
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(w.t, err)
	httpClient, err := catalogd.HTTPClient(w.certs.caPEM)
	require.NoError(w.t, err)
	ctx, cancel := context.WithCancel(w.ctx)
	logFile, err := os.OpenFile(w.decisionLog(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(w.t, err)
	w.t.Cleanup(func() { _ = logFile.Close() })
	_, err = controllers.Setup(ctx, mgr, controllers.Options{
		DecisionLog:       decisionlog.New(decisionlog.NewWriterSink(logFile), decisionlog.Options{}),
		PolicyNamespace:   policyNS,
		SkipSubscriptions: true,
		Extensions:        catalogd.New(catalogd.Options{HTTP: httpClient}),
		// Longer than any wait: what heals a hold (an operand, a catalog, a gate's spec) must
		// come through a watch.
		HeldRecheck: time.Hour,
	})
	require.NoError(w.t, err)
	m := &tollgate{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	w.tollgate = m
	w.t.Cleanup(w.stopTollgate)
}

// decisionLog is the file Tollgate's decision log goes to, across restarts.
func (w *world) decisionLog() string { return filepath.Join(w.logDir, "decisions.log") }

// stopTollgate stops Tollgate's manager, if it runs, and waits until it has stopped.
func (w *world) stopTollgate() {
	w.t.Helper()
	m := w.tollgate
	if m == nil {
		return
	}
	w.tollgate = nil
	m.cancel()
	select {
	case err := <-m.done:
		require.NoError(w.t, err, "Tollgate's manager")
	case <-time.After(wait):
		w.t.Errorf("Tollgate's manager did not stop within %s", wait)
	}
}

// gateExtension creates the ExtensionGate of the ClusterExtension name.
func (w *world) gateExtension(name string, spec tollgatev1alpha1.ExtensionGateSpec) {
	w.t.Helper()
	w.create(&tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
}

// editGate changes the ExtensionGate name's spec with edit.
func (w *world) editGate(name string, edit func(*tollgatev1alpha1.ExtensionGateSpec)) {
	w.t.Helper()
	g := &tollgatev1alpha1.ExtensionGate{}
	require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKey{Name: name}, g))
	before := g.DeepCopy()
	edit(&g.Spec)
	require.NoError(w.t, w.c.Patch(w.ctx, g, client.MergeFrom(before)))
}

// waitGate waits until the ExtensionGate name's status, for its current generation, satisfies
// cond, and returns it.
func (w *world) waitGate(name, what string, cond func(*tollgatev1alpha1.ExtensionGate) bool) *tollgatev1alpha1.ExtensionGate {
	w.t.Helper()
	g := &tollgatev1alpha1.ExtensionGate{}
	var err error
	w.eventually("ExtensionGate "+name+" "+what, func() bool {
		g = &tollgatev1alpha1.ExtensionGate{}
		err = w.c.Get(w.ctx, client.ObjectKey{Name: name}, g)
		return err == nil && g.Status.ObservedGeneration == g.Generation && cond(g)
	}, func() string {
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("status: %+v", g.Status)
	})
	return g
}

// heldBy says the gate's decision is held by a standing denial of code.
func heldBy(code string) func(*tollgatev1alpha1.ExtensionGate) bool {
	return func(g *tollgatev1alpha1.ExtensionGate) bool {
		return !g.Status.Decision.Allowed && g.Status.Decision.BlockedBy == code
	}
}

// both says a and b hold.
func both(a, b func(*tollgatev1alpha1.ExtensionGate) bool) func(*tollgatev1alpha1.ExtensionGate) bool {
	return func(g *tollgatev1alpha1.ExtensionGate) bool { return a(g) && b(g) }
}

// pinOwned says the gate's PinOwned condition has reason.
func pinOwned(reason string) func(*tollgatev1alpha1.ExtensionGate) bool {
	return func(g *tollgatev1alpha1.ExtensionGate) bool {
		c := apimeta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionPinOwned)
		return c != nil && c.Reason == reason
	}
}

// pinRecord is the record of the pin Tollgate last set on the ClusterExtension name.
func (w *world) pinRecord(name string) (tollgatev1alpha1.PinRecord, bool) {
	w.t.Helper()
	u := w.get(clusterExtensionKind, name)
	return tollgatev1alpha1.ParsePinRecord(u.GetAnnotations()[tollgatev1alpha1.PinRecordAnnotation])
}

// policyConfigMap creates a policy ConfigMap of kind (policysource.KindRego or KindData).
func (w *world) policyConfigMap(name, kind string, data map[string]string) {
	w.t.Helper()
	w.create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: name, Labels: map[string]string{policysource.Label: kind}},
		Data:       data,
	})
}

// pack is the source of the policy pack name in bundles/packs.
func pack(name string) string {
	b, err := os.ReadFile(repo.Path("bundles", "packs", name, name+".rego"))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// freezeNow is the freeze pack's data with one period that holds now (and the fixtures' clock).
func freezeNow() string {
	return `{"packs": {"freeze": {"periods": [{"start": "2026-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z", "reason": "quarter-end close"}]}}}`
}

// grantWidgetRead plays the admin granting Tollgate read access to the sample's widgets.
func (w *world) grantWidgetRead() {
	w.t.Helper()
	w.create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-read-widgets"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{widgetGroup}, Resources: []string{widgetPlural}, Verbs: []string{"get", "list", "watch"}}},
	})
	w.create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-read-widgets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tollgate-read-widgets"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: policyNS, Name: serviceAccount}},
	})
}

// stillPinned fails the test unless the ClusterExtension name is pinned at, and has installed,
// version.
func (w *world) stillPinned(name, version string) {
	w.t.Helper()
	u := w.get(clusterExtensionKind, name)
	require.Equal(w.t, version, nestedString(u, "spec", "source", "catalog", "version"), describe(u))
	require.Equal(w.t, version, installedVersion(u), describe(u))
}

// contains says whether any of the gate's denials' messages contains s.
func contains(g *tollgatev1alpha1.ExtensionGate, s string) bool {
	for _, d := range g.Status.Decision.Denials {
		if strings.Contains(d.Message, s) {
			return true
		}
	}
	return false
}

// republish publishes the sample catalog folder dir as a new image and points the ClusterCatalog
// at it by digest, so catalogd unpacks it at once rather than at its next poll; it returns the
// digest reference once catalogd serves it.
func (w *world) republish(dir string) string {
	w.t.Helper()
	digest := w.registry.publishCatalog(sample(dir))
	ref := w.registry.host + "/" + catalogRepo + "@" + digest.String()
	u := w.get(clusterCatalogKind, catalogName)
	before := u.DeepCopy()
	require.NoError(w.t, unstructured.SetNestedField(u.Object, ref, "spec", "source", "image", "ref"))
	unstructured.RemoveNestedField(u.Object, "spec", "source", "image", "pollIntervalMinutes") // refused with a digest
	require.NoError(w.t, w.c.Patch(w.ctx, u, client.MergeFrom(before)))
	w.waitFor(clusterCatalogKind, catalogName, "serving "+dir, func(u *unstructured.Unstructured) bool {
		return nestedString(u, "status", "resolvedSource", "image", "ref") == ref &&
			conditionIs(u, "Serving", metav1.ConditionTrue, "Available")
	})
	return ref
}

// selectEveryCatalog removes the ClusterExtension name's catalog selector: every ClusterCatalog
// is selected.
func (w *world) selectEveryCatalog(name string) {
	w.t.Helper()
	u := w.get(clusterExtensionKind, name)
	before := u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "spec", "source", "catalog", "selector")
	require.NoError(w.t, w.c.Patch(w.ctx, u, client.MergeFrom(before)))
}

// delete deletes the object name of kind.
func (w *world) delete(kind schema.GroupVersionKind, name string) {
	w.t.Helper()
	require.NoError(w.t, client.IgnoreNotFound(w.c.Delete(w.ctx, newObject(kind, name))))
}

// setAvailability sets the ClusterCatalog name's spec.availabilityMode.
func (w *world) setAvailability(name, mode string) {
	w.t.Helper()
	u := w.get(clusterCatalogKind, name)
	before := u.DeepCopy()
	require.NoError(w.t, unstructured.SetNestedField(u.Object, mode, "spec", "availabilityMode"))
	require.NoError(w.t, w.c.Patch(w.ctx, u, client.MergeFrom(before)))
}

// widget creates a Widget, the sample's operand kind (its CRD installed by OLM v1), in the
// install namespace, reporting Degraded with status and message.
func (w *world) widget(name string, degraded metav1.ConditionStatus, message string) *unstructured.Unstructured {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(widgetGroup + "/v1")
	u.SetKind("Widget")
	u.SetNamespace(installNS)
	u.SetName(name)
	w.create(u)
	w.setWidgetDegraded(u, degraded, message)
	return u
}

// setWidgetDegraded sets the widget's Degraded condition, as its operator would (the CRD has
// no status subresource).
func (w *world) setWidgetDegraded(u *unstructured.Unstructured, status metav1.ConditionStatus, message string) {
	w.t.Helper()
	require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKeyFromObject(u), u))
	before := u.DeepCopy()
	conds := []any{
		map[string]any{"type": "Available", "status": "True", "reason": "Ready", "message": "serving", "lastTransitionTime": "2026-01-01T00:00:00Z"},
		map[string]any{"type": "Progressing", "status": "False", "reason": "Ready", "message": "idle", "lastTransitionTime": "2026-01-01T00:00:00Z"},
		map[string]any{"type": "Degraded", "status": string(status), "reason": "Replicas", "message": message, "lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z")},
	}
	require.NoError(w.t, unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"))
	require.NoError(w.t, w.c.Patch(w.ctx, u, client.MergeFrom(before)))
}

// waitEvent waits for an event of reason about the cluster-scoped object name.
func (w *world) waitEvent(name, reason string) {
	w.t.Helper()
	var seen []string
	w.eventually("an event "+reason+" about "+name, func() bool {
		events := &corev1.EventList{}
		if err := w.c.List(w.ctx, events); err != nil {
			return false
		}
		seen = seen[:0]
		for _, e := range events.Items {
			seen = append(seen, e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
			if e.InvolvedObject.Name == name && e.Reason == reason {
				return true
			}
		}
		return false
	}, func() string { return strings.Join(seen, "\n") })
}

// heldMetric is the code of the ClusterExtension name's tollgate_held_extensions series, and
// whether it has one, as the manager in this process exports it.
func heldMetric(t *testing.T, name string) (string, bool) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "tollgate_held_extensions" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["name"] == name {
				return labels["code"], true
			}
		}
	}
	return "", false
}
