package controllers

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// +kubebuilder:rbac:groups=operators.coreos.com,resources=subscriptions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operators.coreos.com,resources=installplans,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operators.coreos.com,resources=clusterserviceversions;catalogsources;operatorconditions;operatorgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=packages.operators.coreos.com,resources=packagemanifests,verbs=get;list;watch
// +kubebuilder:rbac:groups=tollgate.dev,resources=upgradegates,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=tollgate.dev,resources=upgradegates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=selfsubjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// GateReconciler keeps one UpgradeGate per Subscription and acts on its decision.
type GateReconciler struct {
	client.Client
	// APIReader reads what the cache leaves out (an InstallPlan's managed fields, to say who
	// approved it behind the gate); nil reads nothing.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Policies  *Policies
	// Input is the configuration the policies see; its DefaultMode applies to gates whose
	// spec.mode is empty.
	Input input.Config
	// TakeOverApproval switches Automatic Subscriptions to Manual.
	TakeOverApproval bool
	// LeaveDependenciesAutomatic leaves the Subscriptions OLM creates for the dependencies
	// of plans Tollgate approved as OLM creates them, Automatic; by default they are
	// switched to Manual, so that their upgrades are gated too.
	LeaveDependenciesAutomatic bool
	// Reevaluate is how often a gate is re-evaluated without a change (time-based policies
	// such as maintenance windows and expiring overrides); zero means never.
	Reevaluate time.Duration
	// Workers is how many Subscriptions are reconciled at once; zero means one.
	Workers int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DecisionLog logs changed decisions and approvals; nil logs nothing.
	DecisionLog *decisionlog.Logger

	operands *operandWatches
	reader   client.Reader                                  // the cache (operands too), minus the kinds the API server does not serve
	written  upgradeGateWrites                              // gates written that the cache may not show yet
	approved ownApprovals                                   // plans approved whose event has not come back yet
	queue    priorityqueue.PriorityQueue[reconcile.Request] // the controller's (newQueue); nil in unit tests
	planning planning                                       // gates whose status waits while OLM is between two steps
	// approvals notes the approvals under way, which the evaluations for a status wait for.
	approvals approvalsFirst
	// unwritable holds the gates whose last status write failed (types.NamespacedName →
	// true): their status goes before any approval until a write succeeds.
	unwritable sync.Map
	// loggedAhead holds the decision logged ahead of an approval, before the gate's status
	// held it (types.NamespacedName → tollgatev1alpha1.Decision): the last one logged, so the
	// status write that follows does not log it twice (lastLogged).
	loggedAhead sync.Map
}

// Reconcile is fetch → decide → approve → record for the Subscription req names. An approval
// carries its decision record (tollgatev1alpha1.ApprovalRecordAnnotation) in the write that
// approves the plan, so no approval lands without its record; the gate is evaluated again
// once OLM has had a moment for its next step, and that evaluation's status write records
// the approval (read from the plan) and where OLM took it. An approval costs one write, and
// the status write that follows. Only while the gate's status is not known to be writable
// (no decision recorded yet, or its last write failed) does the status go first, and a gate
// whose status cannot be written then approves nothing.
func (r *GateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.Policies.Loaded() { // the admin's policy is not loaded yet: decide nothing
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	gate, err := r.ensureGate(ctx, req.NamespacedName) // nil when the Subscription is gone
	if gate == nil || err != nil {
		return ctrl.Result{}, r.count("gate", err)
	}
	// Reads the cache only; the evaluation is pure, its errors a PolicyError denial.
	decider := r.decider(r.reader)
	doc, err := decider.Gather(ctx, req.NamespacedName)
	if doc == nil || err != nil {
		return ctrl.Result{}, r.count("gather", wrap(err, "gather %s", req.NamespacedName))
	}
	if err := r.operands.watch(ctx, req.NamespacedName, doc.OperandGVKs, doc.OperandNamespaces); err != nil {
		return ctrl.Result{}, r.count("gather", err)
	}
	setPerSubscription(unreadableOperandKinds, req.NamespacedName, float64(len(doc.UnreadableOperandKinds)))
	if wait := r.deferral(gate, doc); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if wait := r.statusWork(gate, doc); wait > 0 {
		return r.later(req.NamespacedName, wait), nil
	}
	dec, err := decider.DecideGathered(ctx, doc)
	if err == nil {
		err = r.watchDependencyOperands(ctx, req.NamespacedName, dec)
	}
	if err != nil {
		return ctrl.Result{}, r.count("gather", wrap(err, "decide %s", req.NamespacedName))
	}
	extra, err := r.holdAutomatic(ctx, dec.Subscription)
	if err != nil {
		return ctrl.Result{}, r.count("approve", err)
	}
	approving := lastApprovable(dec)
	if approving != "" && r.recordable(gate) {
		d := r.statusOf(gate, dec, extra, "").status.Decision
		r.logAhead(gate, d, dec)
		return r.approveThen(ctx, dec, d, approving)
	}
	next := r.statusOf(gate, dec, extra, approving, r.bypassesOf(ctx, gate, dec)...)
	waiting, err := r.writeStatus(ctx, gate, dec, next)
	if err != nil || waiting > 0 {
		return ctrl.Result{RequeueAfter: waiting}, r.count("status", err)
	}
	if approving == "" {
		return ctrl.Result{RequeueAfter: r.requeueAfter(dec)}, nil
	}
	return r.approveThen(ctx, dec, next.status.Decision, approving)
}

// approveThen approves the plans dec allows, each carrying the record of the gate's decision
// d, and has the gate evaluated again after olmStepDelay: the approval's own event does not
// (ownApprovals), so that evaluation's status write records the approval together with
// OLM's next step. When the approval did not land as expected (the plan changed meanwhile:
// its event comes; or the write failed), the gate is evaluated again a second later, from
// what the plans show then.
func (r *GateReconciler) approveThen(ctx context.Context, dec *approval.Decision, d tollgatev1alpha1.Decision, approving string) (ctrl.Result, error) {
	approved, err := r.approve(ctx, dec, d)
	if approved != approving {
		return ctrl.Result{RequeueAfter: time.Second}, r.count("approve", err)
	}
	return r.later(client.ObjectKeyFromObject(dec.Subscription), olmStepDelay), r.count("approve", err)
}

// later has the gate key evaluated again after d at the default priority. A result's
// RequeueAfter keeps the priority the reconcile was queued at: after an approval, which went
// first, that would put a status write ahead of the approvals still waiting.
func (r *GateReconciler) later(key types.NamespacedName, d time.Duration) ctrl.Result {
	if r.queue == nil {
		return ctrl.Result{RequeueAfter: d}
	}
	r.queue.AddWithOpts(priorityqueue.AddOpts{After: d, Priority: ptr.To(0)}, reconcile.Request{NamespacedName: key})
	return ctrl.Result{}
}

// lastApprovable names the last of dec's pending plans that Tollgate may approve, if any.
func lastApprovable(dec *approval.Decision) string {
	name := ""
	for i, v := range dec.Plans {
		if v.Approvable {
			name = dec.PendingInstallPlans[i].Name
		}
	}
	return name
}

// requeueAfter is when the gate is evaluated again without any change: when time alone
// changes its decision (recheckAt, an instant of the policies' clock, input.now, which counts
// whole seconds: one second more so the next evaluation is past it), or else after the
// safety-net period.
func (r *GateReconciler) requeueAfter(dec *approval.Decision) time.Duration {
	next := r.Reevaluate
	if at := dec.Result.RecheckAt; !at.IsZero() {
		wait := at.Sub(r.now()) + time.Second
		if next == 0 || wait < next {
			next = max(wait, time.Second)
		}
	}
	return next
}

func (r *GateReconciler) decider(reader client.Reader) *approval.Decider {
	return &approval.Decider{Reader: reader, Policies: r.Policies, Input: r.Input, Now: r.Now}
}

func (r *GateReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// ensureGate returns the Subscription's gate, creating it when missing. When the
// Subscription is gone it deletes the gate (garbage collection does the same through the
// owner reference, but not every cluster runs it promptly) and returns nil.
func (r *GateReconciler) ensureGate(ctx context.Context, key types.NamespacedName) (*tollgatev1alpha1.UpgradeGate, error) {
	sub := &v1alpha1.Subscription{}
	if err := r.Get(ctx, key, sub); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("get subscription %s: %w", key, err)
		}
		forgetSubscription(key)
		r.operands.forget(key)
		r.written.forget(key)
		r.planning.forget(key)
		r.approvals.forget(key)
		r.unwritable.Delete(key)
		r.loggedAhead.Delete(key)
		gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		return nil, client.IgnoreNotFound(r.Delete(ctx, gate))
	}
	gate := &tollgatev1alpha1.UpgradeGate{}
	err := r.Get(ctx, key, gate)
	switch {
	case err == nil:
		return r.written.latest(key, gate), nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get gate %s: %w", key, err)
	}
	if own := r.written.latest(key, nil); own != nil { // created, not in the cache yet
		return own, nil
	}
	gate = gatestatus.New(sub)
	if err := r.Create(ctx, gate); err != nil {
		if apierrors.IsAlreadyExists(err) { // the cache was behind; the next event brings it
			return nil, nil
		}
		return nil, fmt.Errorf("create gate %s: %w", key, err)
	}
	r.written.record(key, "", gate)
	ctrl.LoggerFrom(ctx).Info("created upgrade gate")
	return gate, nil
}

// pendingStatus is the status an evaluation gives a gate, before it is written.
type pendingStatus struct {
	status tollgatev1alpha1.UpgradeGateStatus
	// problems are what the policies returned that the status could not hold as is.
	problems []string
	// approving names the plan about to be approved, if any.
	approving string
}

// statusOf is the status dec gives gate. approving names the plan about to be approved, if
// any; otherwise a pending plan, or else the plan the Subscription references, that carries
// this gate's approval record is the last approved (its status write may not have followed
// its approval). bypassed are the plans approved behind the gate that its status is to record.
func (r *GateReconciler) statusOf(gate *tollgatev1alpha1.UpgradeGate, dec *approval.Decision, extra []metav1.Condition, approving string, bypassed ...tollgatev1alpha1.Bypass) pendingStatus {
	next, problems := gatestatus.Next(gate.Status, gatestatus.Observation{
		Generation:   gate.Generation,
		Subscription: dec.Subscription,
		Result:       dec.Result,
		Digest:       func() string { return engine.Digest(dec.Doc) },
		Extra:        extra,
		Approved:     cmp.Or(approving, recordedApproval(dec.PendingInstallPlans, gate.Name), referencedApproval(dec.InstallPlan, gate.Name)),
		Unapproved:   unapproved(dec.PendingInstallPlans),
		Bypasses:     bypassed,
		Now:          metav1.NewTime(r.now().Truncate(time.Second)),
	})
	return pendingStatus{status: next, problems: problems, approving: approving}
}

// recordable says whether gate's status is known to be writable: it holds a decision and
// its last write by this manager did not fail. Only then may an approval go before the
// status write that records it.
func (r *GateReconciler) recordable(gate *tollgatev1alpha1.UpgradeGate) bool {
	_, failed := r.unwritable.Load(client.ObjectKeyFromObject(gate))
	return gate.Status.Decision.EvaluatedAt != nil && !failed
}

// writeStatus writes the gate's status as next only when it changed, and reports a changed
// decision as Events (reportDecision). A change that is not urgent waits while OLM is
// between two steps (olmStepDelay): then it returns how much longer, writing nothing.
func (r *GateReconciler) writeStatus(ctx context.Context, gate *tollgatev1alpha1.UpgradeGate, dec *approval.Decision, next pendingStatus) (time.Duration, error) {
	key := client.ObjectKeyFromObject(gate)
	blocked := 1.0
	if next.status.Decision.Allowed {
		blocked = 0
	}
	setPerSubscription(blockedSubscriptions, key, blocked)
	if equality.Semantic.DeepEqual(gate.Status, next.status) {
		r.planning.forget(key) // nothing waits
		return 0, nil
	}
	old, before := gate.Status, gate.ResourceVersion
	if wait := r.planning.wait(key, urgent(gate.Status, next.status, next.approving), midway(dec.Document), r.now()); wait > 0 {
		return wait, nil
	}
	// A full update with the gate's resourceVersion: a gate changed meanwhile (an admin
	// edit) conflicts, and its event brings a fresh evaluation.
	gate.Status = next.status
	if err := r.Status().Update(ctx, gate); err != nil {
		r.written.forget(key)
		r.unwritable.Store(key, true)
		return 0, fmt.Errorf("write status of gate %s: %w", key, err)
	}
	r.unwritable.Delete(key)
	r.written.record(key, before, gate)
	// Reported once the status is written, so a retried write does not report twice.
	r.reportProblems(ctx, gate, next.problems)
	r.reportDecision(old, next.status, dec.Subscription)
	r.reportBypasses(gate, dec, bypass.Added(old.Bypasses, next.status.Bypasses))
	r.logWritten(key, old.Decision, next.status.Decision, dec)
	return 0, nil
}

// logAhead logs the decision d that an approval is about to rest on when the gate's status
// does not hold it yet: the status write that would log it comes after the approval, and the
// decision log keeps a decision before the approval that rests on it.
func (r *GateReconciler) logAhead(gate *tollgatev1alpha1.UpgradeGate, d tollgatev1alpha1.Decision, dec *approval.Decision) {
	key := client.ObjectKeyFromObject(gate)
	r.logChange(r.lastLogged(key, gate.Status.Decision), d, dec)
	r.loggedAhead.Store(key, d)
}

// logWritten logs dec, whose decision next the gate's status now holds, when next differs
// from the last decision logged for the gate.
func (r *GateReconciler) logWritten(key types.NamespacedName, old, next tollgatev1alpha1.Decision, dec *approval.Decision) {
	r.logChange(r.lastLogged(key, old), next, dec)
}

// lastLogged is the last decision logged for the gate key: the one logged ahead of an
// approval, if any (taken: from then on the status holds the reference again), else old,
// the decision of the gate's status.
func (r *GateReconciler) lastLogged(key types.NamespacedName, old tollgatev1alpha1.Decision) tollgatev1alpha1.Decision {
	if ahead, ok := r.loggedAhead.LoadAndDelete(key); ok {
		return ahead.(tollgatev1alpha1.Decision)
	}
	return old
}

// logChange logs dec in the decision log and counts it in the metrics when its decision next
// differs from last.
func (r *GateReconciler) logChange(last, next tollgatev1alpha1.Decision, dec *approval.Decision) {
	if !gatestatus.DecisionChanged(last, next) {
		return
	}
	r.DecisionLog.Decision(dec)
	outcome := "denied"
	if next.Allowed {
		outcome = "allowed"
	}
	decisionsTotal.WithLabelValues(outcome, next.BlockedBy).Inc()
}

// urgent says whether the status change from old to next must be written now: an approval,
// a first decision, a change of whether the upgrade is allowed or of the policy revision, of
// the approval record, or of the gate's spec, or a bypass to record. Other changes (the
// denials of a decision that still holds, conditions, health) may wait for OLM's next step.
func urgent(old, next tollgatev1alpha1.UpgradeGateStatus, approving string) bool {
	was, now := old.Decision, next.Decision
	return approving != "" || was.EvaluatedAt == nil || was.Allowed != now.Allowed ||
		was.PolicyRevision != now.PolicyRevision || was.LastApprovedInstallPlan != now.LastApprovedInstallPlan ||
		old.ObservedGeneration != next.ObservedGeneration || len(bypass.Added(old.Bypasses, next.Bypasses)) > 0
}

// midway says whether OLM is between two steps of what in shows: a plan being prepared, or
// an operator's conditions not copied yet.
func midway(in *input.Document) bool {
	return preparing(in.PendingInstallPlans) || copying(in.OperatorCondition)
}

// unapproved names the pending plans not approved yet.
func unapproved(plans []v1alpha1.InstallPlan) []string {
	var names []string
	for i := range plans {
		if !plans[i].Spec.Approved {
			names = append(names, plans[i].Name)
		}
	}
	return names
}

// recordedApproval names the approved plan among plans that carries gate's approval record,
// if any.
func recordedApproval(plans []v1alpha1.InstallPlan, gate string) string {
	for i := range plans {
		if !plans[i].Spec.Approved {
			continue // no record to read
		}
		if rec, ok := tollgatev1alpha1.RecordedApproval(plans[i].Annotations); ok && rec.Gate == gate {
			return plans[i].Name
		}
	}
	return ""
}

// referencedApproval names the plan the Subscription references when it carries gate's
// approval record: OLM may complete an approved plan before the status write that follows the
// approval, and a complete plan is no longer pending.
func referencedApproval(plan *v1alpha1.InstallPlan, gate string) string {
	if plan == nil {
		return ""
	}
	return recordedApproval([]v1alpha1.InstallPlan{*plan}, gate)
}

// reportProblems reports what the policies returned that the status could not hold as is.
func (r *GateReconciler) reportProblems(ctx context.Context, gate *tollgatev1alpha1.UpgradeGate, problems []string) {
	for _, p := range problems {
		ctrl.LoggerFrom(ctx).Info("policy result needs fixing", "problem", p)
		r.Recorder.Event(gate, corev1.EventTypeWarning, EventPolicyResultInvalid, p)
	}
}

// count records a failed step in the metrics and passes the error on.
func (r *GateReconciler) count(step string, err error) error {
	if err != nil {
		reconcileErrorsTotal.WithLabelValues(step).Inc()
	}
	return err
}

func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
