package controllers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// heldInstallWaiting is a first install waiting for approval (firstInstallWaiting) whose
// Subscription holdLabelled holds.
func heldInstallWaiting(t *testing.T, ctx context.Context, c client.Client) *v1alpha1.InstallPlan {
	t.Helper()
	held := firstInstallWaiting(t, ctx, c)
	sub := &v1alpha1.Subscription{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(held), sub))
	sub.Labels = map[string]string{"tollgate-test/hold": "true"}
	require.NoError(t, c.Update(ctx, sub))
	return held
}

// heldAwaitingApproval says whether the gate holds its plan with holdLabelled's code while the
// plan awaits approval.
func heldAwaitingApproval(g *tollgatev1alpha1.UpgradeGate) bool {
	return g.Status.Decision.BlockedBy == "MajorVersionUpgrade" &&
		meta.IsStatusConditionTrue(g.Status.Conditions, tollgatev1alpha1.ConditionInstallPlanAwaitingManualApproval)
}

// holdLabelled holds every Subscription labelled tollgate-test/hold=true, with the code the
// version pack gives a major jump.
const holdLabelled = `package tollgate.site

deny contains {"code": "MajorVersionUpgrade", "message": "held by the test"} if {
	input.subscription.metadata.labels["tollgate-test/hold"] == "true"
}
`

// TestAPlanApprovedByHandIsReportedOnce: a plan the gate holds, approved by hand (field
// manager kubectl-patch), gives a Warning on the plan and on the gate, a status entry, one
// count and one decision log entry; a later reconcile and a restarted manager report it no
// more. Beside it, a plan Tollgate approves itself reports nothing.
func TestAPlanApprovedByHandIsReportedOnce(t *testing.T) {
	env, ctx := apiServer(t)
	c := env.Client
	mine := firstInstallWaiting(t, ctx, c)
	held := heldInstallWaiting(t, ctx, c)
	before := bypassCount(t, tollgatev1alpha1.BypassKindInstallPlan)

	sink := &eventSink{}
	stop := runManager(t, ctx, env.Config, sink)
	gate := awaitUpgradeGate(t, ctx, c, mine, "Tollgate approves the plan it allows", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.LastApprovedInstallPlan == mine.Name
	})
	assert.Empty(t, gate.Status.Bypasses, "Tollgate's own approval is no bypass")
	awaitUpgradeGate(t, ctx, c, held, "the other plan held, awaiting approval", heldAwaitingApproval)
	assert.Equal(t, before, bypassCount(t, tollgatev1alpha1.BypassKindInstallPlan), "nothing counted yet")
	assert.Empty(t, sink.bypasses())

	plan := &v1alpha1.InstallPlan{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(held), plan))
	base := plan.DeepCopy()
	plan.Spec.Approved = true
	require.NoError(t, c.Patch(ctx, plan, client.MergeFrom(base), client.FieldOwner("kubectl-patch")))

	gate = awaitUpgradeGate(t, ctx, c, held, "the gate records the bypass", func(g *tollgatev1alpha1.UpgradeGate) bool { return len(g.Status.Bypasses) > 0 })
	require.Len(t, gate.Status.Bypasses, 1)
	sink.awaitLogged(t, ctx)
	b := gate.Status.Bypasses[0]
	assert.Equal(t, tollgatev1alpha1.BypassKindInstallPlan, b.Kind)
	assert.Equal(t, plan.Name, b.Name)
	assert.Equal(t, plan.UID, b.UID)
	assert.Equal(t, "kubectl-patch", b.By)
	require.NotNil(t, b.At, "the plan's managedFields say when")
	assert.WithinDuration(t, time.Now(), b.At.Time, time.Minute)
	assert.Equal(t, []string{"MajorVersionUpgrade"}, b.Decision.Codes)
	assert.False(t, b.Decision.Allowed)
	assert.Equal(t, gate.Status.Decision.PolicyRevision, b.Decision.PolicyRevision)
	assert.Equal(t, gate.Status.Decision.InputDigest, b.Decision.InputDigest)
	assert.Equal(t, before+1, bypassCount(t, tollgatev1alpha1.BypassKindInstallPlan), "counted once")
	logged := sink.bypasses()
	require.Len(t, logged, 1, "logged once")
	assert.Equal(t, decisionlog.BypassResult{GateKind: "UpgradeGate", Gate: engine.ObjectKey{Namespace: gate.Namespace, Name: gate.Name}, Bypass: b}, logged[0])
	for _, kind := range []string{"InstallPlan", "UpgradeGate"} {
		ev := awaitBypassEvent(t, ctx, c, kind, plan.Namespace, plan.Name)
		assert.Equal(t, corev1.EventTypeWarning, ev.Type)
		t.Logf("the %s's event: %s", kind, ev.Message)
		assert.Contains(t, ev.Message, "InstallPlan "+plan.Namespace+"/"+plan.Name+" approved by field manager kubectl-patch at ")
		assert.Contains(t, ev.Message, "without Tollgate's approval (gate "+gate.Namespace+"/"+gate.Name+" held it: MajorVersionUpgrade; policy revision "+b.Decision.PolicyRevision+")")
	}

	bumpGeneration(t, ctx, c, gate)
	stop()
	require.Len(t, sink.bypasses(), 1, "a later reconcile reports nothing more")

	restarted := &eventSink{}
	runManager(t, ctx, env.Config, restarted)
	bumpGeneration(t, ctx, c, gate)
	assert.Empty(t, restarted.bypasses(), "a restarted manager reports nothing more")
	assert.Equal(t, before+1, bypassCount(t, tollgatev1alpha1.BypassKindInstallPlan), "nor counts it again")
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(gate), gate))
	assert.Equal(t, []tollgatev1alpha1.Bypass{b}, gate.Status.Bypasses)
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(mine), gate))
	assert.Empty(t, gate.Status.Bypasses)
}

// TestAPinMovedBySomeoneElseIsReportedOnce: Tollgate owns the pin at 1.0.0, the versions
// above are held; a pin moved to 1.2.0 by hand is taken back and reported once: a Warning on
// the ClusterExtension and on the gate, a status entry, one count, one decision log entry.
func TestAPinMovedBySomeoneElseIsReportedOnce(t *testing.T) {
	sink := &eventSink{}
	heldAbove := `package tollgate.site

deny contains {"code": "HeldForTest", "message": "held by the test"} if {
	input.move.to.version in {"1.1.0", "1.2.0"}
}
`
	c, ctx, _ := extensionWorld(t, func(o *controllers.Options) {
		o.Engine = engine.Options{Modules: []engine.Module{{Path: "site/held.rego", Source: heldAbove}}}
		o.DecisionLog = decisionlog.New(sink, decisionlog.Options{})
	})
	before := bypassCount(t, tollgatev1alpha1.BypassKindClusterExtension)
	installedAt(t, ctx, c, "1.0.0")
	require.NoError(t, c.Create(ctx, &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: "tollgate-demo"},
		Spec: tollgatev1alpha1.ExtensionGateSpec{Mode: tollgatev1alpha1.ModeEnforce}}))
	awaitGate(t, ctx, c, "held at 1.0.0", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.0.0" && pinOwnedReason(g) == "Held" && g.Status.Decision.BlockedBy == "HeldForTest"
	})
	assert.Empty(t, sink.bypasses(), "Tollgate's own pin is no bypass")

	ext := &olmv1.ClusterExtension{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "tollgate-demo"}, ext))
	base := ext.DeepCopy()
	ext.Spec.Source.Catalog.Version = "1.2.0"
	require.NoError(t, c.Patch(ctx, ext, client.MergeFrom(base), client.FieldOwner("kubectl-patch")))

	awaitEvents(t, ctx, c, "PinReclaimed", "ClusterExtension", "", "tollgate-demo") // taken back
	gate := awaitGate(t, ctx, c, "recorded", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return len(g.Status.Bypasses) > 0
	})
	require.Len(t, gate.Status.Bypasses, 1)
	sink.awaitLogged(t, ctx)
	b := gate.Status.Bypasses[0]
	assert.Equal(t, tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindClusterExtension, Name: "tollgate-demo", UID: ext.UID,
		Field: tollgatev1alpha1.BypassFieldVersion, From: "1.0.0", To: "1.2.0", By: "kubectl-patch", At: b.At, SeenAt: b.SeenAt,
		Decision: tollgatev1alpha1.BypassDecision{Codes: []string{"HeldForTest"}, PolicyRevision: gate.Status.Decision.PolicyRevision, InputDigest: b.Decision.InputDigest}}, b)
	require.NotNil(t, b.At)
	assert.NotEmpty(t, b.Decision.InputDigest)
	assert.Equal(t, before+1, bypassCount(t, tollgatev1alpha1.BypassKindClusterExtension), "counted once")
	logged := sink.bypasses()
	require.Len(t, logged, 1, "logged once")
	assert.Equal(t, decisionlog.BypassResult{GateKind: "ExtensionGate", Gate: engine.ObjectKey{Name: "tollgate-demo"}, Bypass: b}, logged[0])
	for _, kind := range []string{"ClusterExtension", "ExtensionGate"} {
		ev := awaitBypassEvent(t, ctx, c, kind, "", "tollgate-demo")
		t.Logf("the %s's event: %s", kind, ev.Message)
		assert.Contains(t, ev.Message, "ClusterExtension tollgate-demo pin moved from 1.0.0 to 1.2.0 by field manager kubectl-patch at ")
		assert.Contains(t, ev.Message, "without Tollgate's approval (gate tollgate-demo held it: HeldForTest; policy revision ")
	}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "tollgate-demo"}, ext))
	assert.Equal(t, "1.0.0", ext.Spec.Source.Catalog.Version, "taken back")

	patched := gate.DeepCopy()
	patched.Spec.Channels = []string{"stable"}
	require.NoError(t, c.Patch(ctx, patched, client.MergeFrom(gate)))
	awaitGate(t, ctx, c, "the gate decided again", func(g *tollgatev1alpha1.ExtensionGate) bool { return g.Status.ObservedGeneration == g.Generation })
	assert.Len(t, sink.bypasses(), 1, "a later decision reports nothing more")
	assert.Equal(t, before+1, bypassCount(t, tollgatev1alpha1.BypassKindClusterExtension))
}

// runManager runs a manager for the gates of Subscriptions, logging decisions into sink,
// until the returned stop is called (or the test ends).
func runManager(t *testing.T, ctx context.Context, cfg *rest.Config, sink decisionlog.Sink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: apis.NewScheme(), Cache: controllers.CacheOptions("tollgate-system"),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	_, err = controllers.Setup(ctx, mgr, controllers.Options{
		PolicyNamespace: "tollgate-system",
		Engine:          engine.Options{Modules: []engine.Module{{Path: "site/hold.rego", Source: holdLabelled}}},
		DecisionLog:     decisionlog.New(sink, decisionlog.Options{}),
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = sync.OnceFunc(func() { cancel(); require.NoError(t, <-done) })
	t.Cleanup(stop)
	return stop
}

// awaitUpgradeGate waits until the gate of plan's Subscription (same namespace and name)
// satisfies ok.
func awaitUpgradeGate(t *testing.T, ctx context.Context, c client.Client, plan *v1alpha1.InstallPlan, what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) *tollgatev1alpha1.UpgradeGate {
	t.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && ok(gate), nil
	})
	require.NoError(t, err, "%s; the gate's status: %+v", what, gate.Status)
	return gate
}

// bumpGeneration changes gate's spec (an override of a code nothing denies) and waits until a
// manager has decided on it: its status then says the new generation.
func bumpGeneration(t *testing.T, ctx context.Context, c client.Client, gate *tollgatev1alpha1.UpgradeGate) {
	t.Helper()
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(gate), gate))
	patched := gate.DeepCopy()
	patched.Spec.Overrides = append(patched.Spec.Overrides, tollgatev1alpha1.Override{Code: "Unused" + string(rune('A'+len(gate.Spec.Overrides))), Reason: "a change of spec"})
	require.NoError(t, c.Patch(ctx, patched, client.MergeFrom(gate)))
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: gate.Namespace, Name: gate.Name}}
	awaitUpgradeGate(t, ctx, c, plan, "the gate decided on its new spec", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.ObservedGeneration == g.Generation
	})
}

// awaitBypassEvent waits for the Bypassed event on the object of kind and name (in ns), and
// checks it was sent once.
func awaitBypassEvent(t *testing.T, ctx context.Context, c client.Client, kind, ns, name string) corev1.Event {
	t.Helper()
	found := awaitEvents(t, ctx, c, controllers.EventBypassed, kind, ns, name)
	require.Len(t, found, 1)
	assert.EqualValues(t, 1, found[0].Count, "sent once")
	return found[0]
}

// awaitEvents waits until there are events of reason on the object of kind and name (in ns),
// and returns them. An event stays where a status condition moves on: a state the manager
// passes through is awaited by its event.
func awaitEvents(t *testing.T, ctx context.Context, c client.Client, reason, kind, ns, name string) []corev1.Event {
	t.Helper()
	var found []corev1.Event
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		events := &corev1.EventList{}
		listed := c.List(ctx, events) == nil // else the API server is busy: ask again
		found = nil
		for _, ev := range events.Items {
			o := ev.InvolvedObject
			if ev.Reason == reason && o.Kind == kind && o.Namespace == ns && o.Name == name {
				found = append(found, ev)
			}
		}
		return listed && len(found) > 0, nil
	})
	require.NoError(t, err, "a %s event on %s %s/%s", reason, kind, ns, name)
	return found
}

// bypassCount is tollgate_bypasses_total{kind} as the manager's metrics registry has it.
func bypassCount(t *testing.T, kind string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "tollgate_bypasses_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no tollgate_bypasses_total{kind=%q} series", kind)
	return 0
}

// eventSink keeps every decision log event.
type eventSink struct {
	mu     sync.Mutex
	events []decisionlog.Event
}

func (s *eventSink) Write(ev *decisionlog.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, *ev)
	return nil
}

func (s *eventSink) Run(ctx context.Context) error { <-ctx.Done(); return nil }

// awaitLogged waits until a bypass is logged: the last of what the manager does once a gate's
// status records one (reportBypass), after its Events and its count. The status is seen
// before then.
func (s *eventSink) awaitLogged(t *testing.T, ctx context.Context) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return len(s.bypasses()) > 0, nil
	})
	require.NoError(t, err, "a bypass in the decision log")
}

// bypasses are the bypass events' results, in the order logged.
func (s *eventSink) bypasses() []decisionlog.BypassResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []decisionlog.BypassResult
	for _, ev := range s.events {
		if ev.Path == decisionlog.PathBypass {
			out = append(out, ev.Result.(decisionlog.BypassResult))
		}
	}
	return out
}

// TestAPlanRunUnapprovedIsReportedOnce: OLM runs a plan whose status says Installing, approved
// or not; a held plan moved there by hand through its status is a bypass too, recorded once,
// naming the client that wrote the status.
func TestAPlanRunUnapprovedIsReportedOnce(t *testing.T) {
	env, ctx := apiServer(t)
	c := env.Client
	held := heldInstallWaiting(t, ctx, c)
	before := bypassCount(t, tollgatev1alpha1.BypassKindInstallPlan)
	sink := &eventSink{}
	runManager(t, ctx, env.Config, sink)
	awaitUpgradeGate(t, ctx, c, held, "the plan held, awaiting approval", heldAwaitingApproval)

	plan := &v1alpha1.InstallPlan{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(held), plan))
	base := plan.DeepCopy()
	plan.Status.Phase = v1alpha1.InstallPlanPhaseInstalling
	require.NoError(t, c.Status().Patch(ctx, plan, client.MergeFrom(base), client.FieldOwner("kubectl-patch")))

	gate := awaitUpgradeGate(t, ctx, c, held, "the gate records the bypass", func(g *tollgatev1alpha1.UpgradeGate) bool { return len(g.Status.Bypasses) > 0 })
	require.Len(t, gate.Status.Bypasses, 1)
	sink.awaitLogged(t, ctx)
	b := gate.Status.Bypasses[0]
	assert.Equal(t, []string{"InstallPlan", plan.Name, "status.phase", "Installing", "kubectl-patch"}, []string{b.Kind, b.Name, b.Field, b.To, b.By})
	assert.Equal(t, []string{"MajorVersionUpgrade"}, b.Decision.Codes)
	ev := awaitBypassEvent(t, ctx, c, "InstallPlan", plan.Namespace, plan.Name)
	t.Logf("the plan's event: %s", ev.Message)
	assert.Contains(t, ev.Message, "InstallPlan "+plan.Namespace+"/"+plan.Name+" run unapproved (status.phase set to Installing) by field manager kubectl-patch at ")

	base = plan.DeepCopy()
	plan.Status.Phase = v1alpha1.InstallPlanPhaseComplete
	require.NoError(t, c.Status().Patch(ctx, plan, client.MergeFrom(base)))
	bumpGeneration(t, ctx, c, gate)
	assert.Equal(t, before+1, bypassCount(t, tollgatev1alpha1.BypassKindInstallPlan), "the run completed is the same bypass, counted once")
	require.Len(t, sink.bypasses(), 1, "and logged once")
}
