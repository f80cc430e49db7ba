package scale

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

const (
	globalNS = "olm"
	policyNS = "tollgate-system"
	// catalog is the global catalog every Subscription installs from.
	catalog = "catalog"
	pkg     = "app"
	version = "1.0.0"
	// seedWorkers is how many goroutines create the namespaces' objects.
	seedWorkers = 16
	// conditionType is the gate condition that reports the catalogs' health.
	conditionType = "CatalogSourcesUnhealthy"
	ready         = "READY"
	unhealthy     = "TRANSIENT_FAILURE"
)

// scaleN is how many namespaces (Subscriptions, gates) to seed: TOLLGATE_SCALE_N, else def.
func scaleN(tb testing.TB, def int) int {
	tb.Helper()
	s := os.Getenv("TOLLGATE_SCALE_N")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(tb, err, "TOLLGATE_SCALE_N")
	require.Positive(tb, n, "TOLLGATE_SCALE_N")
	return n
}

// world is a control plane seeded with n namespaces, and the manager once started.
type world struct {
	tb  testing.TB
	ctx context.Context
	n   int
	// cfg is how every client here talks to the API server: without client-side rate limit,
	// as `tollgate run` does (controller-runtime's GetConfig sets QPS -1).
	cfg *rest.Config
	c   client.WithWatch
	// state is the global catalog's connection state the gates last reflected.
	state string

	stopManager func()
	managerDone chan error
	// plan is the one plan awaiting approval (offerUpgrade); approval gets how long after the
	// manager's start it was approved (watchApproval).
	plan     client.ObjectKey
	approval chan time.Duration
	// writes and reads count the manager's requests to the API server (watches included
	// in reads when they start).
	writes, reads atomic.Int64
}

// counting counts the requests that pass through it.
type counting struct {
	next          http.RoundTripper
	writes, reads *atomic.Int64
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		c.reads.Add(1)
	} else {
		c.writes.Add(1)
	}
	return c.next.RoundTrip(req)
}

// newWorld starts a control plane and seeds it; the manager is not started yet.
func newWorld(tb testing.TB, n int) *world {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = env.Stop() })
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	scheme := apis.NewScheme()
	require.NoError(tb, apiextensionsv1.AddToScheme(scheme))
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	require.NoError(tb, err)
	w := &world{tb: tb, ctx: ctx, n: n, cfg: cfg, c: c, state: ready}
	for _, ns := range []string{globalNS, policyNS} {
		require.NoError(tb, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: globalNS, Name: catalog},
		Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/example/catalog:latest", DisplayName: catalog}}
	require.NoError(tb, c.Create(ctx, cs))
	require.NoError(tb, w.setCatalog(ready))
	// The package's operand kind is served, as once OLM installs the CSV that owns it: without
	// it every evaluation would check the absent CRD on the API server again.
	olmplay.ServeOperandKind(ctx, tb, c, pkg)
	require.NoError(tb, parallel(ctx, n, seedWorkers, w.seed))
	w.offerUpgrade(n - 1)
	return w
}

// upgradeVersion is the version offered in the namespace that has an upgrade waiting.
const upgradeVersion = "1.1.0"

// offerUpgrade plays OLM offering an upgrade in the i-th namespace, one its operator agrees
// to: a Manual plan awaiting approval, and the Subscription pointing at it. The last
// namespace is the last a start-up would reach in the order the lists come (by name).
func (w *world) offerUpgrade(i int) {
	w.tb.Helper()
	ns := nsName(i)
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "install-" + pkg},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{olmplay.CSVName(pkg, upgradeVersion)}, Approval: v1alpha1.ApprovalManual, Generation: 1}}
	require.NoError(w.tb, w.createWithStatus(w.ctx, plan, func() {
		plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{catalog}}
	}))
	sub := &v1alpha1.Subscription{}
	require.NoError(w.tb, w.c.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: pkg}, sub))
	sub.Status.CurrentCSV = olmplay.CSVName(pkg, upgradeVersion)
	sub.Status.State = v1alpha1.SubscriptionStateUpgradePending
	sub.Status.InstallPlanRef = &corev1.ObjectReference{Kind: "InstallPlan", Namespace: ns, Name: plan.Name, APIVersion: "operators.coreos.com/v1alpha1"}
	require.NoError(w.tb, w.c.Status().Update(w.ctx, sub))
	w.plan = client.ObjectKeyFromObject(plan)
}

// watchApproval polls, from start on, the plan offerUpgrade made, and sends on w.approval how
// long after start it was approved.
func (w *world) watchApproval(start time.Time) {
	w.approval = make(chan time.Duration, 1)
	go func() {
		for w.ctx.Err() == nil {
			plan := &v1alpha1.InstallPlan{}
			if w.c.Get(w.ctx, w.plan, plan) == nil && plan.Spec.Approved {
				w.approval <- time.Since(start)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// awaitApproval returns how long after the manager's start the plan awaiting approval was
// approved.
func (w *world) awaitApproval() time.Duration {
	w.tb.Helper()
	select {
	case took := <-w.approval:
		return took
	case <-time.After(limit(w.n)):
		w.tb.Fatalf("the plan in %s awaiting approval was not approved", w.plan.Namespace)
		return 0
	}
}

// nsName is the i-th seeded namespace.
func nsName(i int) string { return fmt.Sprintf("scale-%05d", i) }

// parallel runs do(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for k := range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if err := do(ctx, i); err != nil {
					errs[k] = err
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// seed plays OLM having installed the package in the i-th namespace: an OperatorGroup, a
// Succeeded CSV, a Manual Subscription at its latest version from the global catalog, and
// the CSV's OperatorCondition reporting Upgradeable.
func (w *world) seed(ctx context.Context, i int) error {
	ns, csvName := nsName(i), olmplay.CSVName(pkg, version)
	now := metav1.Now()
	if err := w.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}}}
	if err := w.createWithStatus(ctx, og, func() { og.Status = operatorsv1.OperatorGroupStatus{Namespaces: []string{ns}, LastUpdated: &now} }); err != nil {
		return err
	}
	owned := []v1alpha1.CRDDescription{{Name: olmplay.OperandPlural(pkg) + "." + olmplay.OperandGroup(pkg), Version: "v1", Kind: olmplay.OperandKind(pkg)}}
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: csvName},
		Spec: v1alpha1.ClusterServiceVersionSpec{DisplayName: pkg, Version: version,
			InstallStrategy:           v1alpha1.NamedInstallStrategy{StrategyName: "deployment", StrategySpec: &apiextensionsv1.JSON{Raw: []byte(`{"deployments":[]}`)}},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: owned}}}
	if err := w.createWithStatus(ctx, csv, func() {
		csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: "InstallSucceeded", Message: "install strategy completed"}
	}); err != nil {
		return err
	}
	upgradeable := metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionTrue, Reason: "Ready", Message: "ready to upgrade", LastTransitionTime: now}
	oc := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: csvName},
		Spec: operatorsv2.OperatorConditionSpec{Conditions: []metav1.Condition{upgradeable}}}
	if err := w.createWithStatus(ctx, oc, func() {
		upgradeable.ObservedGeneration = oc.Generation
		oc.Status.Conditions = []metav1.Condition{upgradeable}
	}); err != nil {
		return err
	}
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: catalog, CatalogSourceNamespace: globalNS, Package: pkg, Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual}}
	return w.createWithStatus(ctx, sub, func() {
		sub.Status = v1alpha1.SubscriptionStatus{InstalledCSV: csvName, CurrentCSV: csvName, State: v1alpha1.SubscriptionStateAtLatest, LastUpdated: now}
	})
}

// createWithStatus creates obj, then sets and writes its status.
func (w *world) createWithStatus(ctx context.Context, obj client.Object, status func()) error {
	if err := w.c.Create(ctx, obj); err != nil {
		return fmt.Errorf("create %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	status()
	if err := w.c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("status of %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// setCatalog writes the global catalog's connection state, as OLM does on a health change.
func (w *world) setCatalog(state string) error {
	cs := &v1alpha1.CatalogSource{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: globalNS, Name: catalog}, cs); err != nil {
		return err
	}
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{Address: catalog + "." + globalNS + ".svc:50051", LastObservedState: state, LastConnectTime: metav1.Now()}
	return w.c.Status().Update(w.ctx, cs)
}

// startManager runs the manager in the test process as `tollgate run` does by default
// (DefaultWorkers), until stopManager.
func (w *world) startManager() {
	w.tb.Helper()
	ctx, cancel := context.WithCancel(w.ctx)
	cfg := rest.CopyConfig(w.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{rt, &w.writes, &w.reads} })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(policyNS),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(w.tb, err)
	_, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: policyNS, Workers: controllers.DefaultWorkers})
	require.NoError(w.tb, err)
	w.managerDone = make(chan error, 1)
	w.watchApproval(time.Now())
	go func() { w.managerDone <- mgr.Start(ctx) }()
	w.stopManager = cancel
	w.tb.Cleanup(w.shutdown)
}

// shutdown stops the manager, if running, and waits for it.
func (w *world) shutdown() {
	if w.stopManager == nil {
		return
	}
	w.stopManager()
	w.stopManager = nil
	if err := <-w.managerDone; err != nil {
		w.tb.Errorf("manager: %v", err)
	}
}

// catalogHealth is the global catalog's health as the gate records it, "" when absent.
func catalogHealth(g *tollgatev1alpha1.UpgradeGate) metav1.ConditionStatus {
	for _, c := range g.Status.CatalogStatus {
		if c.Namespace == globalNS && c.Name == catalog {
			return c.Healthy
		}
	}
	return ""
}

// reflects says whether the gate's status reflects the global catalog in state: decided,
// catalogStatus, and the CatalogSourcesUnhealthy condition.
func reflects(g *tollgatev1alpha1.UpgradeGate, state string) bool {
	healthy, cond := metav1.ConditionTrue, metav1.ConditionFalse
	if state != ready {
		healthy, cond = metav1.ConditionFalse, metav1.ConditionTrue
	}
	return g.Status.Decision.EvaluatedAt != nil && catalogHealth(g) == healthy &&
		meta.IsStatusConditionPresentAndEqual(g.Status.Conditions, conditionType, cond)
}

// await runs act and returns how long until every one of the n gates reflects the global
// catalog in state, as a watch on UpgradeGates sees them (everyOne); the watch starts before
// act.
func (w *world) await(state string, limit time.Duration, act func() error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(w.ctx, limit)
	defer cancel()
	gates, err := watchEvery(ctx, w.c, func() client.ObjectList { return &tollgatev1alpha1.UpgradeGateList{} }, func(o client.Object) bool {
		g, ok := o.(*tollgatev1alpha1.UpgradeGate)
		return ok && reflects(g, state)
	})
	defer gates.stop()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := act(); err != nil {
		return 0, err
	}
	if err := gates.wait(ctx, w.n, nil); err != nil {
		return 0, fmt.Errorf("gates reflecting the catalog %s after %s: %w", state, limit, err)
	}
	w.state = state
	return time.Since(start), nil
}

// limit bounds one wait for n gates: generous, only a guard against a hang.
func limit(n int) time.Duration { return 2*time.Minute + time.Duration(n)*50*time.Millisecond }

// untilDecided starts the manager and returns how long until every gate has its first
// decision and reflects the healthy catalog.
func (w *world) untilDecided() time.Duration {
	w.tb.Helper()
	took, err := w.await(ready, limit(w.n), func() error { w.startManager(); return nil })
	require.NoError(w.tb, err)
	return took
}

// flip turns the global catalog's health over and returns how long until every gate
// reflects it.
func (w *world) flip() time.Duration {
	w.tb.Helper()
	next := opposite(w.state)
	took, err := w.await(next, limit(w.n), func() error { return w.setCatalog(next) })
	require.NoError(w.tb, err)
	return took
}

func opposite(state string) string {
	if state == ready {
		return unhealthy
	}
	return ready
}

// bareWrites is the baseline: with the manager stopped, a bare client writes the n gates'
// status as the flip would (the global catalog's health and the CatalogSourcesUnhealthy
// condition turned over), one Status().Update each as the manager does, on workers
// goroutines. It returns how long until the watch has seen them all.
func (w *world) bareWrites(workers int) time.Duration {
	w.tb.Helper()
	require.Nil(w.tb, w.stopManager, "the manager must be stopped")
	list := &tollgatev1alpha1.UpgradeGateList{}
	require.NoError(w.tb, w.c.List(w.ctx, list))
	require.Len(w.tb, list.Items, w.n)
	next := opposite(w.state)
	took, err := w.await(next, limit(w.n), func() error {
		return parallel(w.ctx, w.n, workers, func(ctx context.Context, i int) error {
			g := &list.Items[i]
			turnOver(g, next)
			return w.c.Status().Update(ctx, g)
		})
	})
	require.NoError(w.tb, err)
	return took
}

// turnOver records the global catalog in state in the gate's status, as Tollgate would.
func turnOver(g *tollgatev1alpha1.UpgradeGate, state string) {
	healthy, cond, reason := metav1.ConditionTrue, metav1.ConditionFalse, "CatalogSourcesHealthy"
	if state != ready {
		healthy, cond, reason = metav1.ConditionFalse, metav1.ConditionTrue, "CatalogSourcesUnhealthy"
	}
	for i := range g.Status.CatalogStatus {
		if c := &g.Status.CatalogStatus[i]; c.Namespace == globalNS && c.Name == catalog {
			c.Healthy, c.LastObservedState = healthy, state
		}
	}
	meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: conditionType, Status: cond, Reason: reason,
		Message: "targeted catalogsource " + globalNS + "/" + catalog + " is " + state, ObservedGeneration: g.Generation})
}
