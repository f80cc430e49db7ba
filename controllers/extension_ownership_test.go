package controllers_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/process"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const extDigest = "registry.example/catalogs/demo@sha256:2f6bd7ad0d3b0fbc0f6a1f1ae7b4fba3c7b84b1e4f1a6c39f5ee1f0e0b1b2c3d"

// extensionWorld starts a control plane with OLM v1's CRDs, a catalogd serving catalog revision
// 2 (tollgate-demo 1.0.0, 1.1.0, 1.2.0), its ClusterCatalog, and Tollgate's manager gating OLM v1
// alone, its options changed by each of with; no OLM runs. It is skipped without OLM v1's CRDs
// (`make olmv1`), except in CI.
func extensionWorld(t *testing.T, with ...func(*controllers.Options)) (client.Client, context.Context, func(content, digest string)) {
	t.Helper()
	return extensionWorldWrapped(t, nil, with...)
}

// extensionWorldWrapped is extensionWorld with the manager's requests to the API server going
// through wrap (nil: as they are).
func extensionWorldWrapped(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper, with ...func(*controllers.Options)) (client.Client, context.Context, func(content, digest string)) {
	t.Helper()
	dir := process.FindBuild("TOLLGATE_OLMV1_BIN", "olmv1", "crds")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("OLM v1's CRDs not found: run `make olmv1`")
		}
		t.Skip("OLM v1's CRDs not found: run `make olmv1`, or set TOLLGATE_OLMV1_BIN to a folder holding crds/")
	}
	ctrl.SetLogger(logr.Discard())
	env, err := controlplane.Start(controlplane.Options{CRDDirs: []string{filepath.Join(dir, "crds"), repo.Path("config", "crd", "bases")}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := env.Client
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-system"}}))

	b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "catalog-revision-2.jsonl"))
	require.NoError(t, err)
	var content atomic.Pointer[string]
	content.Store(ptr.To(string(b)))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /catalogs/demo/api/v1/all", func(rw http.ResponseWriter, _ *http.Request) { _, _ = rw.Write([]byte(*content.Load())) })
	server := httptest.NewTLSServer(mux)
	t.Cleanup(server.Close)
	cat := &olmv1.ClusterCatalog{ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: olmv1.ClusterCatalogSpec{Source: olmv1.CatalogSource{Type: "Image", Image: &olmv1.ImageSource{Ref: extDigest}}, AvailabilityMode: olmv1.AvailabilityModeAvailable}}
	require.NoError(t, c.Create(ctx, cat))
	cat.Status = olmv1.ClusterCatalogStatus{
		Conditions:     []metav1.Condition{{Type: "Serving", Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: metav1.Now()}},
		ResolvedSource: &olmv1.ResolvedCatalogSource{Type: "Image", Image: &olmv1.ResolvedImageSource{Ref: extDigest}},
		URLs:           &olmv1.ClusterCatalogURLs{Base: server.URL + "/catalogs/demo"},
	}
	require.NoError(t, c.Status().Update(ctx, cat))

	cfg := rest.CopyConfig(env.Config)
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: apis.NewScheme(), Cache: controllers.CacheOptionsFor("tollgate-system", false),
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	httpClient, err := catalogd.HTTPClient(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw}))
	require.NoError(t, err)
	opts := controllers.Options{PolicyNamespace: "tollgate-system", SkipSubscriptions: true, Extensions: catalogd.New(catalogd.Options{HTTP: httpClient})}
	for _, change := range with {
		change(&opts)
	}
	_, err = controllers.Setup(ctx, mgr, opts)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	publish := func(revision, digest string) {
		content.Store(&revision)
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cat), cat))
		cat.Status.ResolvedSource.Image.Ref = digest
		require.NoError(t, c.Status().Update(ctx, cat))
	}
	return c, ctx, publish
}

// installedAt creates ClusterExtension tollgate-demo pinned at and installed at version, settled.
func installedAt(t *testing.T, ctx context.Context, c client.Client, version string) *olmv1.ClusterExtension {
	t.Helper()
	ext := &olmv1.ClusterExtension{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-demo"},
		Spec: olmv1.ClusterExtensionSpec{Namespace: "demo", ServiceAccount: &olmv1.ServiceAccountReference{Name: "installer"},
			Source: olmv1.SourceConfig{SourceType: olmv1.SourceTypeCatalog, Catalog: &olmv1.CatalogFilter{
				PackageName: "tollgate-demo", Version: version, Channels: []string{"stable"},
				UpgradeConstraintPolicy: olmv1.UpgradeConstraintPolicyCatalogProvided}}}}
	require.NoError(t, c.Create(ctx, ext))
	now := metav1.Now()
	ext.Status = olmv1.ClusterExtensionStatus{
		Conditions: []metav1.Condition{
			{Type: "Installed", Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: now, ObservedGeneration: ext.Generation},
			{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: now, ObservedGeneration: ext.Generation},
		},
		Install: &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: "tollgate-demo.v" + version, Version: version}},
	}
	require.NoError(t, c.Status().Update(ctx, ext))
	return ext
}

// awaitGate waits until the gate's status satisfies ok.
func awaitGate(t *testing.T, ctx context.Context, c client.Client, what string, ok func(*tollgatev1alpha1.ExtensionGate) bool) *tollgatev1alpha1.ExtensionGate {
	t.Helper()
	gate := &tollgatev1alpha1.ExtensionGate{}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Name: "tollgate-demo"}, gate) == nil && ok(gate), nil
	})
	require.NoError(t, err, "%s; the gate's status: %+v", what, gate.Status)
	return gate
}

func pinOwnedReason(g *tollgatev1alpha1.ExtensionGate) string {
	if c := apimeta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionPinOwned); c != nil {
		return c.Reason
	}
	return ""
}

// pinnedAtInstalled installs tollgate-demo at 1.0.0, gates it (Enforce, range <1.1.0) and waits
// until the gate owns the pin at 1.0.0, with no successor in range.
func pinnedAtInstalled(t *testing.T, ctx context.Context, c client.Client) *tollgatev1alpha1.ExtensionGate {
	t.Helper()
	installedAt(t, ctx, c, "1.0.0")
	gate := &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-demo"},
		Spec: tollgatev1alpha1.ExtensionGateSpec{Mode: tollgatev1alpha1.ModeEnforce, Version: "<1.1.0"}}
	require.NoError(t, c.Create(ctx, gate))
	awaitGate(t, ctx, c, "pinned at 1.0.0", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.0.0" && pinOwnedReason(g) == "Pinned"
	})
	return gate
}

// A user who sets the version together with a matching tollgate.dev/pin record cannot make it
// Tollgate's: the pin Tollgate owns is the gate's status.pin, and any other is taken back.
func TestExtensionPinWithAForgedRecordIsTakenBack(t *testing.T) {
	c, ctx, _ := extensionWorld(t)
	pinnedAtInstalled(t, ctx, c)

	ext := &olmv1.ClusterExtension{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "tollgate-demo"}, ext))
	base := ext.DeepCopy()
	ext.Spec.Source.Catalog.Version = "1.2.0"
	ext.Annotations = map[string]string{tollgatev1alpha1.PinRecordAnnotation: tollgatev1alpha1.PinRecord{Version: "1.2.0", Installed: "1.0.0", PinnedAt: metav1.Now()}.String()}
	require.NoError(t, c.Patch(ctx, ext, client.MergeFrom(base)))

	// Reclaimed is a state the gate passes through (the next evaluation holds the pin while
	// OLM v1 works on the extension): its event stays.
	awaitEvents(t, ctx, c, "PinReclaimed", "ClusterExtension", "", "tollgate-demo")
	awaitGate(t, ctx, c, "the forged pin taken back", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.0.0"
	})
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "tollgate-demo"}, ext))
	require.Equal(t, "1.0.0", ext.Spec.Source.Catalog.Version)
}

// Tollgate's own pin, not yet installed, stays while OLM v1 works on it (every move is held
// while the extension is not settled at its pin), and is taken back once the catalog
// deprecates the bundle it admits.
func TestExtensionPinNotYetInstalledIsWithdrawnWhenDenied(t *testing.T) {
	c, ctx, publish := extensionWorld(t)
	installedAt(t, ctx, c, "1.0.0")
	require.NoError(t, c.Create(ctx, &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-demo"},
		Spec: tollgatev1alpha1.ExtensionGateSpec{Mode: tollgatev1alpha1.ModeEnforce}}))
	awaitGate(t, ctx, c, "moved to 1.2.0, OLM v1 installing it", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.2.0" && pinOwnedReason(g) == "Upgrading"
	})

	b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "catalog-revision-2.jsonl"))
	require.NoError(t, err)
	publish(string(b)+`{"schema":"olm.deprecations","package":"tollgate-demo","entries":[{"reference":{"schema":"olm.bundle","name":"tollgate-demo.v1.2.0"},"message":"broken"}]}`+"\n",
		"registry.example/catalogs/demo@sha256:0000000000000000000000000000000000000000000000000000000000000002")
	// Withdrawn is a state the gate passes through (the next evaluation holds the pin while
	// OLM v1 works on the extension): its event stays.
	awaitEvents(t, ctx, c, "PinWithdrawn", "ClusterExtension", "", "tollgate-demo")
	awaitGate(t, ctx, c, "the pin withdrawn, to the installed version: every move is held while the extension is not settled at its pin",
		func(g *tollgatev1alpha1.ExtensionGate) bool { return g.Status.Pin == "1.0.0" })
	ext := &olmv1.ClusterExtension{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "tollgate-demo"}, ext))
	require.Equal(t, "1.0.0", ext.Spec.Source.Catalog.Version, "no OLM v1 runs here to settle the extension, so nothing moves it on")
}

// failFirstRecord fails, once, the manager's first status write of gate tollgate-demo that
// records pin: the API server answers 500, as when it is overloaded.
type failFirstRecord struct {
	next   http.RoundTripper
	pin    string
	failed *atomic.Bool
}

func (f failFirstRecord) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut || !strings.HasSuffix(req.URL.Path, "/extensiongates/tollgate-demo/status") || f.failed.Load() {
		return f.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if !strings.Contains(string(body), `"pin":"`+f.pin+`"`) || !f.failed.CompareAndSwap(false, true) {
		return f.next.RoundTrip(req)
	}
	status := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected: the API server is overloaded","reason":"InternalError","code":500}`
	return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(status)), Request: req}, nil
}

// A pin Tollgate set whose record failed to be written (the gate's status write refused) is
// still Tollgate's: the next decision records it, and reports no bypass of Tollgate's own move.
func TestAPinWhoseRecordFailedIsRecordedNotReportedAsABypass(t *testing.T) {
	var failed atomic.Bool
	c, ctx, _ := extensionWorldWrapped(t, func(rt http.RoundTripper) http.RoundTripper {
		return failFirstRecord{next: rt, pin: "1.1.0", failed: &failed}
	})
	gate := pinnedAtInstalled(t, ctx, c)

	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(gate), gate))
	gate.Spec.Version = "<1.2.0"
	require.NoError(t, c.Update(ctx, gate))
	got := awaitGate(t, ctx, c, "the pin moved to 1.1.0 recorded", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.1.0"
	})
	require.True(t, failed.Load(), "the first write of the record failed")
	require.Empty(t, got.Status.Bypasses, "Tollgate's own move is no bypass")
	require.Equal(t, "Upgrading", pinOwnedReason(got), "Tollgate's pin, OLM v1 installing it")
}

// A successor becoming held is announced once, a Warning UpgradeBlocked on the ClusterExtension,
// and the move that ends the hold once, PinMoved, as a Subscription's hold and release are.
func TestAHoldAndItsReleaseAreAnnouncedOnce(t *testing.T) {
	held := `package tollgate.site

deny contains {"code": "HeldForTest", "message": "held by the test"} if input.move.to.version == "1.1.0"
`
	c, ctx, _ := extensionWorld(t, func(o *controllers.Options) {
		o.Engine = engine.Options{Modules: []engine.Module{{Path: "site/held.rego", Source: held}}}
	})
	installedAt(t, ctx, c, "1.0.0")
	gate := &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-demo"},
		Spec: tollgatev1alpha1.ExtensionGateSpec{Mode: tollgatev1alpha1.ModeEnforce, Version: "<1.2.0"}}
	require.NoError(t, c.Create(ctx, gate))
	awaitGate(t, ctx, c, "1.1.0 held", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.0.0" && pinOwnedReason(g) == "Held"
	})
	blocked := awaitEvents(t, ctx, c, controllers.EventUpgradeBlocked, "ClusterExtension", "", "tollgate-demo")
	assert.Contains(t, blocked[0].Message, "HeldForTest")

	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(gate), gate))
	gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: "HeldForTest", Reason: "the test lifts it"}}
	require.NoError(t, c.Update(ctx, gate))
	awaitEvents(t, ctx, c, "PinMoved", "ClusterExtension", "", "tollgate-demo")
	awaitGate(t, ctx, c, "moved to 1.1.0", func(g *tollgatev1alpha1.ExtensionGate) bool { return g.Status.Pin == "1.1.0" })
	blocked = awaitEvents(t, ctx, c, controllers.EventUpgradeBlocked, "ClusterExtension", "", "tollgate-demo")
	require.Len(t, blocked, 1)
	assert.EqualValues(t, 1, blocked[0].Count, "one hold, announced once")
}
