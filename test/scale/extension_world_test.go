package scale

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/process"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const (
	// extCatalog is the one ClusterCatalog; extPkg its one package (test/testdata/olmv1).
	extCatalog = "bench"
	extPkg     = "tollgate-demo"
	// extFrom is the version every ClusterExtension has installed and is pinned at, the highest
	// of the catalog's first revision; extTo the successor its second revision publishes, within
	// the gates' range (extRange).
	extFrom  = "1.1.0"
	extTo    = "1.2.0"
	extRange = "<2.0.0"
	// extDigests name the catalog's content at each revision: one fetch each.
	extDigest1 = "registry.example/catalogs/bench@sha256:2f6bd7ad0d3b0fbc0f6a1f1ae7b4fba3c7b84b1e4f1a6c39f5ee1f0e0b1b2c3d"
	extDigest2 = "registry.example/catalogs/bench@sha256:9c1e0f7b3a5d2e4c6b8a0f1e3d5c7b9a1e2f4d6c8b0a2e4f6d8c0b2a4e6f8d0c"
	// setLabel tells the ClusterExtensions Tollgate pins (setTollgate) from those the bare
	// client pins (setBare).
	setLabel    = "scale.tollgate.dev/set"
	setTollgate = "tollgate"
	setBare     = "bare"
)

// extensionsN is how many ClusterExtensions to seed: TOLLGATE_EXTENSIONS_N, else def.
func extensionsN(tb testing.TB, def int) int {
	tb.Helper()
	s := os.Getenv("TOLLGATE_EXTENSIONS_N")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(tb, err, "TOLLGATE_EXTENSIONS_N")
	require.Positive(tb, n, "TOLLGATE_EXTENSIONS_N")
	return n
}

// olmv1CRDs is the folder of OLM v1's CRDs beside its build (`make olmv1`), as test/olmv1 finds
// it; without it the test is skipped, except in CI, where it fails.
func olmv1CRDs(tb testing.TB) string {
	tb.Helper()
	dir := process.FindBuild("TOLLGATE_OLMV1_BIN", "olmv1", "crds")
	if dir == "" {
		why := "OLM v1's CRDs not found: run `make olmv1`, or set TOLLGATE_OLMV1_BIN to a folder holding crds/"
		if os.Getenv("CI") != "" {
			tb.Fatal(why)
		}
		tb.Skip(why)
	}
	return filepath.Join(dir, "crds")
}

// extWorld is a control plane with OLM v1's CRDs, one ClusterCatalog served by an in-process
// catalogd, and ClusterExtensions installed as OLM v1 would leave them; no OLM runs.
type extWorld struct {
	tb  testing.TB
	ctx context.Context
	n   int
	cfg *rest.Config
	c   client.WithWatch
	// catalogd serves the catalog's content; served counts its requests.
	catalogd *httptest.Server
	served   atomic.Int64
	// content is what catalogd serves: the first revision, then the second (publish).
	content, published atomic.Pointer[[]byte]

	mgr *extManager
}

// extManager is Tollgate's manager, gating OLM v1 alone.
type extManager struct {
	cancel   context.CancelFunc
	done     chan error
	policies *controllers.Policies
	catalogs *catalogd.Client
	// writes and reads count its requests to the API server.
	writes, reads atomic.Int64
}

// newExtWorld starts the control plane and catalogd, and seeds n ClusterExtensions of set
// setTollgate.
func newExtWorld(tb testing.TB, n int) *extWorld {
	tb.Helper()
	crds := olmv1CRDs(tb)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	env, err := controlplane.Start(controlplane.Options{CRDDirs: []string{crds, repo.Path("config", "crd", "bases")}})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = env.Stop() })
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	scheme := apis.NewScheme()
	require.NoError(tb, apiextensionsv1.AddToScheme(scheme))
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	require.NoError(tb, err)
	w := &extWorld{tb: tb, ctx: ctx, n: n, cfg: cfg, c: c}
	w.serveWidgets()
	w.startCatalogd()
	w.createCatalog()
	w.seed(setTollgate)
	return w
}

// serveWidgets serves the kind the package's bundles provide (olm.gvk Widget), as once OLM v1
// has installed one: its operands are then read, as in a cluster, rather than looked up
// again on the API server by every decision.
func (w *extWorld) serveWidgets() {
	w.tb.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.demo.tollgate.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "demo.tollgate.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
	require.NoError(w.tb, w.c.Create(w.ctx, crd))
	deadline := time.Now().Add(time.Minute)
	for {
		require.NoError(w.tb, w.c.Get(w.ctx, client.ObjectKeyFromObject(crd), crd))
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return
			}
		}
		require.True(w.tb, time.Now().Before(deadline), "CRD %s not established within a minute", crd.Name)
		time.Sleep(50 * time.Millisecond)
	}
}

// startCatalogd serves the catalog's content as catalogd does, at <status.urls.base>/api/v1/all:
// its first revision (1.0.0 and 1.1.0) until publish.
func (w *extWorld) startCatalogd() {
	for rev, p := range map[string]*atomic.Pointer[[]byte]{"1": &w.content, "2": &w.published} {
		content, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "catalog-revision-"+rev+".jsonl"))
		require.NoError(w.tb, err)
		p.Store(&content)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /catalogs/"+extCatalog+"/api/v1/all", func(rw http.ResponseWriter, _ *http.Request) {
		w.served.Add(1)
		rw.Header().Set("Content-Type", "application/jsonl")
		_, _ = rw.Write(*w.content.Load())
	})
	w.catalogd = httptest.NewTLSServer(mux)
	w.tb.Cleanup(w.catalogd.Close)
}

// createCatalog creates the ClusterCatalog and sets its status as catalogd does once it serves
// the content: Serving, its base URL and the digest it resolved.
func (w *extWorld) createCatalog() {
	cat := &olmv1.ClusterCatalog{ObjectMeta: metav1.ObjectMeta{Name: extCatalog, Labels: map[string]string{olmv1.MetadataNameLabel: extCatalog}},
		Spec: olmv1.ClusterCatalogSpec{Source: olmv1.CatalogSource{Type: "Image", Image: &olmv1.ImageSource{Ref: extDigest1}},
			AvailabilityMode: olmv1.AvailabilityModeAvailable}}
	require.NoError(w.tb, createWithStatus(w.ctx, w.c, cat, func() {
		now := metav1.Now()
		cat.Status = olmv1.ClusterCatalogStatus{
			Conditions: []metav1.Condition{
				{Type: "Serving", Status: metav1.ConditionTrue, Reason: "Available", Message: "serving its content", LastTransitionTime: now, ObservedGeneration: cat.Generation},
				{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "unpacked", LastTransitionTime: now, ObservedGeneration: cat.Generation},
			},
			ResolvedSource: &olmv1.ResolvedCatalogSource{Type: "Image", Image: &olmv1.ResolvedImageSource{Ref: extDigest1}},
			URLs:           &olmv1.ClusterCatalogURLs{Base: w.catalogd.URL + "/catalogs/" + extCatalog},
			LastUnpacked:   &now,
		}
	}))
}

// publish has catalogd serve the catalog's second revision (1.2.0 published), as it does once
// it has unpacked a new image: its content, then the digest it resolved in the catalog's status.
func (w *extWorld) publish(ctx context.Context) error {
	w.content.Store(w.published.Load())
	cat := &olmv1.ClusterCatalog{}
	if err := w.c.Get(ctx, client.ObjectKey{Name: extCatalog}, cat); err != nil {
		return err
	}
	now := metav1.Now()
	cat.Status.ResolvedSource.Image.Ref, cat.Status.LastUnpacked = extDigest2, &now
	return w.c.Status().Update(ctx, cat)
}

// extName is the i-th ClusterExtension of set.
func extName(set string, i int) string { return fmt.Sprintf("%s-%05d", set, i) }

// seed creates the n ClusterExtensions of set, each pinned at and installed at extFrom, settled.
func (w *extWorld) seed(set string) {
	w.tb.Helper()
	require.NoError(w.tb, parallel(w.ctx, w.n, seedWorkers, func(ctx context.Context, i int) error {
		ext := &olmv1.ClusterExtension{ObjectMeta: metav1.ObjectMeta{Name: extName(set, i), Labels: map[string]string{setLabel: set}},
			Spec: olmv1.ClusterExtensionSpec{Namespace: "demo", ServiceAccount: &olmv1.ServiceAccountReference{Name: "installer"},
				Source: olmv1.SourceConfig{SourceType: olmv1.SourceTypeCatalog, Catalog: &olmv1.CatalogFilter{
					PackageName: extPkg, Version: extFrom, Channels: []string{"stable"},
					UpgradeConstraintPolicy: olmv1.UpgradeConstraintPolicyCatalogProvided}}}}
		return createWithStatus(ctx, w.c, ext, func() { ext.Status = installed(ext.Generation, extFrom) })
	}))
}

// installed is a ClusterExtension's status once OLM v1 has installed version and settled.
func installed(generation int64, version string) olmv1.ClusterExtensionStatus {
	now := metav1.Now()
	return olmv1.ClusterExtensionStatus{
		Conditions: []metav1.Condition{
			{Type: "Installed", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "Installed bundle " + extPkg + ".v" + version + " successfully", LastTransitionTime: now, ObservedGeneration: generation},
			{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "Desired state reached", LastTransitionTime: now, ObservedGeneration: generation},
		},
		Install: &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: extPkg + ".v" + version, Version: version}},
	}
}

// createWithStatus creates obj, then sets and writes its status.
func createWithStatus(ctx context.Context, c client.Client, obj client.Object, status func()) error {
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}
	status()
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("status of %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// startManager runs Tollgate's manager in the test process as test/olmv1 does, OLM v1 alone,
// reading catalogd trusting its certificate, and waits until the policies are loaded.
func (w *extWorld) startManager() {
	w.tb.Helper()
	m := &extManager{done: make(chan error, 1)}
	cfg := rest.CopyConfig(w.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{rt, &m.writes, &m.reads} })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptionsFor(policyNS, false),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// A run of -count starts a manager, with the same controllers, per run.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(w.tb, err)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.catalogd.Certificate().Raw})
	httpClient, err := catalogd.HTTPClient(caPEM)
	require.NoError(w.tb, err)
	m.catalogs = catalogd.New(catalogd.Options{HTTP: httpClient})
	ctx, cancel := context.WithCancel(w.ctx)
	m.cancel = cancel
	m.policies, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: policyNS, SkipSubscriptions: true, Extensions: m.catalogs})
	require.NoError(w.tb, err)
	go func() { m.done <- mgr.Start(ctx) }()
	w.mgr = m
	w.tb.Cleanup(w.shutdown)
	deadline := time.Now().Add(time.Minute)
	for !m.policies.Loaded() {
		require.True(w.tb, time.Now().Before(deadline), "the policies were not loaded within a minute")
		time.Sleep(10 * time.Millisecond)
	}
}

// shutdown stops the manager, if running, and waits for it.
func (w *extWorld) shutdown() {
	m := w.mgr
	if m == nil {
		return
	}
	w.mgr = nil
	m.cancel()
	if err := <-m.done; err != nil {
		w.tb.Errorf("manager: %v", err)
	}
}

// heapInUse is the process's heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	return mem.HeapInuse
}

// gateAll creates the ExtensionGates of the n ClusterExtensions of setTollgate, on seedWorkers
// goroutines, and returns how long that took.
func (w *extWorld) gateAll(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	err := parallel(ctx, w.n, seedWorkers, func(ctx context.Context, i int) error {
		return w.c.Create(ctx, &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: extName(setTollgate, i)},
			Spec: tollgatev1alpha1.ExtensionGateSpec{Version: extRange}})
	})
	return time.Since(start), err
}

// gate creates the gates with the manager running, waits until each owns its pin at extFrom,
// and returns how long until then.
func (w *extWorld) gate() time.Duration {
	w.tb.Helper()
	require.NotNil(w.tb, w.mgr, "the manager must run")
	start := time.Now()
	_, err := w.gateAll(w.ctx)
	require.NoError(w.tb, err)
	w.awaitOwned(extFrom)
	return time.Since(start)
}

// tollgatePins publishes the catalog's second revision with the manager running and returns how
// long until every ClusterExtension of setTollgate is pinned at extTo, and a function that
// waits until every gate's status records its pin there too and returns how long from the
// new revision that took.
func (w *extWorld) tollgatePins() (pins time.Duration, recorded func() time.Duration) {
	w.tb.Helper()
	require.NotNil(w.tb, w.mgr, "the manager must run")
	ctx, cancel := context.WithTimeout(w.ctx, limit(w.n))
	gates, err := w.gatesOwning(ctx, extTo)
	if err == nil {
		pins, err = w.awaitPins(setTollgate, w.publish)
	}
	if err != nil {
		gates.stop()
		cancel()
		require.NoError(w.tb, err)
	}
	pinned := time.Now()
	return pins, func() time.Duration {
		defer cancel()
		defer gates.stop()
		require.NoError(w.tb, gates.wait(ctx, w.n, nil), "gates recording the pin at %s", extTo)
		return pins + max(0, time.Since(pinned))
	}
}

// gatesOwning counts the gates whose status says they own the pin at version (everyOne).
func (w *extWorld) gatesOwning(ctx context.Context, version string) (*everyOne, error) {
	return watchEvery(ctx, w.c, func() client.ObjectList { return &tollgatev1alpha1.ExtensionGateList{} }, func(o client.Object) bool {
		g, ok := o.(*tollgatev1alpha1.ExtensionGate)
		return ok && gateOwns(g, version)
	})
}

// gateOwns says whether g's status says it owns the pin at version.
func gateOwns(g *tollgatev1alpha1.ExtensionGate, version string) bool {
	c := meta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionPinOwned)
	return g.Status.Pin == version && c != nil && c.Status == metav1.ConditionTrue
}

// barePins is the baseline: with the manager stopped, a bare client moves the pins of the n
// ClusterExtensions of setBare from extFrom to extTo as Tollgate writes them (one merge patch
// each, with the pin record and the resourceVersion it was read at), on workers goroutines. It
// returns how long until every one is pinned at extTo.
func (w *extWorld) barePins(workers int) time.Duration {
	w.tb.Helper()
	require.Nil(w.tb, w.mgr, "the manager must be stopped")
	list := &olmv1.ClusterExtensionList{}
	require.NoError(w.tb, w.c.List(w.ctx, list, client.MatchingLabels{setLabel: setBare}))
	require.Len(w.tb, list.Items, w.n)
	took, err := w.awaitPins(setBare, func(ctx context.Context) error {
		return parallel(ctx, w.n, workers, func(ctx context.Context, i int) error {
			ext := &list.Items[i]
			base := ext.DeepCopy()
			rec := tollgatev1alpha1.PinRecord{Version: extTo, Installed: extFrom, PinnedAt: metav1.Now()}
			ext.Spec.Source.Catalog.Version = extTo
			ext.Annotations = map[string]string{tollgatev1alpha1.PinRecordAnnotation: rec.String()}
			return w.c.Patch(ctx, ext, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		})
	})
	require.NoError(w.tb, err)
	return took
}

// pinnedAt says whether ext is pinned at extTo.
func pinnedAt(ext *olmv1.ClusterExtension) bool {
	return ext.Spec.Source.Catalog != nil && ext.Spec.Source.Catalog.Version == extTo
}

// awaitPins runs act and returns how long until every one of the n ClusterExtensions of set is
// pinned at extTo, as a watch sees them (everyOne); the watch starts before act.
func (w *extWorld) awaitPins(set string, act func(ctx context.Context) error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(w.ctx, limit(w.n))
	defer cancel()
	exts, err := watchEvery(ctx, w.c, func() client.ObjectList { return &olmv1.ClusterExtensionList{} }, func(o client.Object) bool {
		ext, ok := o.(*olmv1.ClusterExtension)
		return ok && pinnedAt(ext)
	}, client.MatchingLabels{setLabel: set})
	defer exts.stop()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	acted := make(chan error, 1)
	go func() { acted <- act(ctx) }()
	if err := exts.wait(ctx, w.n, acted); err != nil {
		return 0, fmt.Errorf("ClusterExtensions pinned at %s: %w", extTo, err)
	}
	return time.Since(start), nil
}

// checkRecords fails unless every ClusterExtension of setTollgate records the pin Tollgate set.
func (w *extWorld) checkRecords() {
	w.tb.Helper()
	list := &olmv1.ClusterExtensionList{}
	require.NoError(w.tb, w.c.List(w.ctx, list, client.MatchingLabels{setLabel: setTollgate}))
	var errs []error
	for _, ext := range list.Items {
		rec, ok := tollgatev1alpha1.ParsePinRecord(ext.Annotations[tollgatev1alpha1.PinRecordAnnotation])
		if !ok || rec.Version != extTo || rec.Installed != extFrom {
			errs = append(errs, fmt.Errorf("ClusterExtension %s: pin record %+v", ext.Name, rec))
		}
	}
	require.NoError(w.tb, errors.Join(errs...))
}

// awaitOwned waits until every gate's status says it owns the pin at version, as a watch of the
// gates sees them (gatesOwning).
func (w *extWorld) awaitOwned(version string) {
	w.tb.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, limit(w.n))
	defer cancel()
	gates, err := w.gatesOwning(ctx, version)
	defer gates.stop()
	if err == nil {
		err = gates.wait(ctx, w.n, nil)
	}
	require.NoError(w.tb, err, "gates owning the pin at %s", version)
}
