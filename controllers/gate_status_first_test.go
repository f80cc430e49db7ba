package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// writes is what the manager wrote, in order, through a client that can refuse the gates'
// status writes as an API server would (a message too long, a webhook, no permission).
type writes struct {
	refuseStatus atomic.Bool
	refused      atomic.Int32

	mu  sync.Mutex
	log []string
}

func (w *writes) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, s)
}

func (w *writes) entries() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}

// client wraps the manager's real client with the interceptor.
func (w *writes) client(config *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(config, opts)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			gate, ok := obj.(*tollgatev1alpha1.UpgradeGate)
			if !ok || sub != "status" {
				return c.SubResource(sub).Update(ctx, obj, opts...)
			}
			if w.refuseStatus.Load() {
				w.refused.Add(1)
				return errors.New("the status write is refused (test)")
			}
			if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
				return err
			}
			w.add(fmt.Sprintf("status allowed=%v lastApproved=%s", gate.Status.Decision.Allowed, gate.Status.Decision.LastApprovedInstallPlan))
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*tollgatev1alpha1.UpgradeGate); ok && w.refuseStatus.Load() {
				w.refused.Add(1)
				return errors.New("the status write is refused (test)")
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if plan, ok := obj.(*v1alpha1.InstallPlan); ok && plan.Spec.Approved {
				rec, _ := tollgatev1alpha1.RecordedApproval(plan.Annotations)
				w.add("approve " + plan.Name + " record=" + rec.Gate)
			}
			return nil
		},
	}), nil
}

// TestNoApprovalWithoutARecordedDecision runs the manager against a real API server through a
// client that refuses the gates' status writes: an InstallPlan the policies allow stays
// unapproved while its gate, which holds no decision yet, cannot record one, and then is
// approved after the status write that records it.
func TestNoApprovalWithoutARecordedDecision(t *testing.T) {
	env, ctx := apiServer(t)

	w := &writes{}
	w.refuseStatus.Store(true)
	startWith(t, ctx, env.Config, w, controllers.Options{})

	plan := firstInstallWaiting(t, ctx, env.Client)
	require.Eventually(t, func() bool { return w.refused.Load() >= 2 }, 20*time.Second, 10*time.Millisecond,
		"the manager decided and tried (and retried) to record its decision")
	require.Never(t, func() bool {
		got := &v1alpha1.InstallPlan{}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got) == nil && got.Spec.Approved
	}, 2*time.Second, 50*time.Millisecond, "no plan is approved while the gate's decision cannot be recorded")
	assert.Empty(t, w.entries(), "nothing was written, nothing approved")

	w.refuseStatus.Store(false)
	require.Eventually(t, func() bool {
		got := &v1alpha1.InstallPlan{}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got) == nil && got.Spec.Approved
	}, 20*time.Second, 10*time.Millisecond, "once the status can be written, the plan is approved")
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil &&
			meta.IsStatusConditionFalse(gate.Status.Conditions, "InstallPlanAwaitingManualApproval")
	}, 20*time.Second, 10*time.Millisecond, "the status follows the approval")
	assert.Equal(t, plan.Name, gate.Status.Decision.LastApprovedInstallPlan)
	time.Sleep(time.Second)
	assert.Equal(t, []string{
		"status allowed=true lastApproved=" + plan.Name, "approve " + plan.Name + " record=" + plan.Name,
		"status allowed=true lastApproved=" + plan.Name,
	}, w.entries(), "the status recording the decision and the plan it approves, the approval, and the status once it landed; nothing more")
}

// TestAnApprovalCarriesItsRecordAndTheStatusFollows: a gate whose status holds a decision
// approves a plan in one write that carries the decision's record; the status recording the
// approval follows; nothing more.
func TestAnApprovalCarriesItsRecordAndTheStatusFollows(t *testing.T) {
	env, ctx := apiServer(t)
	w := &writes{}
	plan, gate := decidedWhilePreparing(t, ctx, env.Config, env.Client, w, controllers.Options{})
	decided := len(w.entries())
	plan.Status.Phase = v1alpha1.InstallPlanPhaseRequiresApproval
	require.NoError(t, env.Client.Status().Update(ctx, plan))

	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && gate.Status.Decision.LastApprovedInstallPlan == plan.Name
	}, 20*time.Second, 10*time.Millisecond, "the gate records the approval")
	time.Sleep(time.Second) // nothing more follows
	assert.Equal(t, []string{"approve " + plan.Name + " record=" + plan.Name, "status allowed=true lastApproved=" + plan.Name}, w.entries()[decided:],
		"the approval, carrying its record, then the status recording it")
	got := &v1alpha1.InstallPlan{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got))
	rec, ok := tollgatev1alpha1.RecordedApproval(got.Annotations)
	require.True(t, ok, "the approved plan carries a record: %v", got.Annotations)
	assert.Equal(t, gate.Name, rec.Gate)
	assert.Equal(t, gate.Status.Decision.PolicyRevision, rec.PolicyRevision)
	assert.Equal(t, gate.Status.Decision.InputDigest, rec.InputDigest)
	assert.NotEmpty(t, rec.PolicyRevision)
}

// TestAGateCatchesUpWithAnApprovalItsStatusMissed: the status write that follows an
// approval fails (the approval landed with its record on the plan); once the status can be
// written, the gate records the approval, read from the plan's record.
func TestAGateCatchesUpWithAnApprovalItsStatusMissed(t *testing.T) {
	env, ctx := apiServer(t)
	w := &writes{}
	plan, gate := decidedWhilePreparing(t, ctx, env.Config, env.Client, w, controllers.Options{})
	w.refuseStatus.Store(true)
	plan.Status.Phase = v1alpha1.InstallPlanPhaseRequiresApproval
	require.NoError(t, env.Client.Status().Update(ctx, plan))
	require.Eventually(t, func() bool { return w.refused.Load() >= 1 }, 20*time.Second, 10*time.Millisecond,
		"the status write after the approval was refused")
	require.Contains(t, w.entries(), "approve "+plan.Name+" record="+plan.Name, "the approval landed with its record")

	w.refuseStatus.Store(false)
	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && gate.Status.Decision.LastApprovedInstallPlan == plan.Name
	}, 20*time.Second, 10*time.Millisecond, "the gate records the approval once its status can be written")
	assert.Equal(t, 1, strings.Count(strings.Join(w.entries(), "\n"), "approve "), "approved once")
}

// TestAPlanWaitingBeforeTheManagerStartsIsApproved: a Subscription without a gate whose plan
// already waits for approval when the manager starts. The first evaluation happens before
// the gate the manager creates is in its cache, and nothing outside the manager changes
// afterwards: the manager's own events must bring the approval, once, with its record.
func TestAPlanWaitingBeforeTheManagerStartsIsApproved(t *testing.T) {
	env, ctx := apiServer(t)
	plan := firstInstallWaiting(t, ctx, env.Client)
	w := &writes{}
	startWith(t, ctx, env.Config, w, controllers.Options{})

	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && gate.Status.Decision.LastApprovedInstallPlan == plan.Name
	}, 20*time.Second, 10*time.Millisecond, "the plan is approved and the gate records it; writes: %q", w.entries())
	time.Sleep(time.Second)
	assert.Equal(t, 1, strings.Count(strings.Join(w.entries(), "\n"), "approve "+plan.Name+" record="+plan.Name), "approved once, with its record")
}

// decidedWhilePreparing plays OLM up to a first install's plan being prepared, then starts a
// manager (startWith) and waits until its gate holds a decision and the status delay while
// OLM prepares has passed. The state is complete before the manager starts, so the first
// decision already sees the plan being prepared.
func decidedWhilePreparing(t *testing.T, ctx context.Context, cfg *rest.Config, c client.Client, w *writes, opts controllers.Options) (*v1alpha1.InstallPlan, *tollgatev1alpha1.UpgradeGate) {
	t.Helper()
	plan := firstInstallWaiting(t, ctx, c, v1alpha1.InstallPlanPhasePlanning)
	startWith(t, ctx, cfg, w, opts)
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(t, func() bool {
		return c.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && gate.Status.Decision.EvaluatedAt != nil
	}, 20*time.Second, 10*time.Millisecond, "the gate holds a decision while the plan is prepared")
	time.Sleep(3 * time.Second)
	return plan, gate
}

// startWith starts a manager whose client goes through w, set up with opts in the policy
// namespace tollgate-system; the test's end stops it.
func startWith(t *testing.T, ctx context.Context, cfg *rest.Config, w *writes, opts controllers.Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: apis.NewScheme(), Cache: controllers.CacheOptions("tollgate-system"),
		Metrics: metricsserver.Options{BindAddress: "0"}, NewClient: w.client,
		// Other tests of this package run a manager in the same process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	opts.PolicyNamespace = "tollgate-system"
	_, err = controllers.Setup(ctx, mgr, opts)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
}

// TestADecisionIsLoggedBeforeTheApprovalThatRestsOnIt: a plan is held while it is prepared
// and allowed once it awaits approval; the approval goes before the status write, and the
// decision log still holds the allowing decision before the approval, once.
func TestADecisionIsLoggedBeforeTheApprovalThatRestsOnIt(t *testing.T) {
	env, ctx := apiServer(t)
	site := "package tollgate.site\n\ndeny contains {\"code\": \"PlanPrepared\", \"message\": \"a plan is being prepared\"} if {\n\tsome p in input.pendingInstallPlans\n\tp.status.phase == \"Planning\"\n}\n"
	sink := &memorySink{}
	w := &writes{}
	plan, gate := decidedWhilePreparing(t, ctx, env.Config, env.Client, w, controllers.Options{
		Engine:      engine.Options{Modules: []engine.Module{{Path: "site/prepared.rego", Source: site}}},
		DecisionLog: decisionlog.New(sink, decisionlog.Options{}),
	})
	require.False(t, gate.Status.Decision.Allowed, "held while the plan is prepared")
	plan.Status.Phase = v1alpha1.InstallPlanPhaseRequiresApproval
	require.NoError(t, env.Client.Status().Update(ctx, plan))

	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(plan), gate) == nil && gate.Status.Decision.LastApprovedInstallPlan == plan.Name
	}, 20*time.Second, 10*time.Millisecond, "the gate records the approval")
	time.Sleep(time.Second)
	assert.Equal(t, "approve "+plan.Name+" record="+plan.Name, w.entries()[len(w.entries())-2], "the approval went before the status write")
	assert.Equal(t, []string{"decision allowed=false", "decision allowed=true", "approval"}, sink.entries(),
		"the held decision, the allowing one, then the approval; nothing twice")
}

// memorySink keeps what the decision log wrote: each event's path and outcome.
type memorySink struct {
	mu  sync.Mutex
	log []string
}

func (s *memorySink) Write(ev *decisionlog.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Path == decisionlog.PathApproval {
		s.log = append(s.log, "approval")
		return nil
	}
	res, _ := ev.Result.(*engine.Result)
	s.log = append(s.log, fmt.Sprintf("decision allowed=%v", res != nil && res.Decision.Allowed))
	return nil
}

func (s *memorySink) Run(ctx context.Context) error { <-ctx.Done(); return nil }

func (s *memorySink) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// firstInstallWaiting plays OLM: a Manual Subscription for a first install from a READY
// catalog, whose InstallPlan is in phase (RequiresApproval unless given). The plan has the
// gate's namespace and name.
func firstInstallWaiting(t *testing.T, ctx context.Context, c client.Client, phase ...v1alpha1.InstallPlanPhase) *v1alpha1.InstallPlan {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "status-first-"}}
	require.NoError(t, c.Create(ctx, ns))
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "og"}, Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns.Name}}}
	require.NoError(t, c.Create(ctx, og))
	cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"},
		Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/example/catalog:latest"}}
	require.NoError(t, c.Create(ctx, cs))
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{LastObservedState: "READY", LastConnectTime: metav1.Now()}
	require.NoError(t, c.Status().Update(ctx, cs))
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "redis"},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"redis.v1.0.0"}, Approval: v1alpha1.ApprovalManual, Generation: 1}}
	require.NoError(t, c.Create(ctx, plan))
	plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{"catalog"}}
	if len(phase) > 0 {
		plan.Status.Phase = phase[0]
	}
	require.NoError(t, c.Status().Update(ctx, plan))
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "redis"},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "catalog", CatalogSourceNamespace: ns.Name, Package: "redis", Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual}}
	require.NoError(t, c.Create(ctx, sub))
	sub.Status = v1alpha1.SubscriptionStatus{CurrentCSV: "redis.v1.0.0", State: v1alpha1.SubscriptionStateUpgradePending, LastUpdated: metav1.Now(),
		InstallPlanRef: &corev1.ObjectReference{Kind: "InstallPlan", Namespace: ns.Name, Name: plan.Name, APIVersion: "operators.coreos.com/v1alpha1"}}
	require.NoError(t, c.Status().Update(ctx, sub))
	return plan
}
