package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/approval"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/gatestatus"
	"github.com/tollgate-dev/tollgate/input"
)

// +kubebuilder:rbac:groups=operators.coreos.com,resources=subscriptions,verbs=get;list;watch
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
	Recorder record.EventRecorder
	Policies *Policies
	// Input is the configuration the policies see; its DefaultMode applies to gates whose
	// spec.mode is empty.
	Input input.Config
	// TakeOverApproval switches Automatic Subscriptions to Manual.
	TakeOverApproval bool
	// Reevaluate is how often a gate is re-evaluated without a change (time-based policies
	// such as maintenance windows and expiring overrides); zero means never.
	Reevaluate time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	operands *operandWatches
	// approvals remembers a plan approved by a reconcile whose record of it did not land, so
	// the next status write records it.
	approvals sync.Map // types.NamespacedName → plan name
}

// Reconcile is fetch → decide → record → approve for the Subscription req names. The
// decision is written into the gate's status before any plan is approved: a gate whose status
// cannot be written (the API server refuses it, a conflict, no permission) approves nothing,
// so every approval has a recorded decision behind it.
func (r *GateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.Policies.Loaded() { // the admin's policy is not loaded yet: decide nothing
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	gate, err := r.ensureGate(ctx, req.NamespacedName) // nil when the Subscription is gone
	if gate == nil || err != nil {
		return ctrl.Result{}, r.count("gate", err)
	}
	// Reads the cache only; the evaluation is pure, its errors a PolicyError denial.
	dec, err := r.decider().Decide(ctx, req.NamespacedName)
	if dec == nil || err != nil {
		return ctrl.Result{}, r.count("gather", wrap(err, "decide %s", req.NamespacedName))
	}
	if err := r.operands.watch(ctx, req.NamespacedName, dec.OperandGVKs); err != nil {
		return ctrl.Result{}, r.count("gather", err)
	}
	extra, err := r.holdAutomatic(ctx, dec.Subscription)
	if err != nil {
		return ctrl.Result{}, r.count("approve", err)
	}
	if err := r.writeStatus(ctx, gate, dec, extra); err != nil {
		return ctrl.Result{}, r.count("status", err)
	}
	approved, err := r.approve(ctx, dec)
	if err != nil { // record what was approved before the failure all the same
		return ctrl.Result{}, r.count("approve", errors.Join(err, r.recordApproval(ctx, gate, approved)))
	}
	return ctrl.Result{RequeueAfter: r.Reevaluate}, r.count("status", r.recordApproval(ctx, gate, approved))
}

func (r *GateReconciler) decider() *approval.Decider {
	return &approval.Decider{Reader: r.Client, Policies: r.Policies, Input: r.Input, Now: r.Now}
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
		blockedSubscriptions.DeleteLabelValues(key.Namespace, key.Name)
		r.operands.forget(key)
		r.approvals.Delete(key)
		gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		return nil, client.IgnoreNotFound(r.Delete(ctx, gate))
	}
	gate := &tollgatev1alpha1.UpgradeGate{}
	err := r.Get(ctx, key, gate)
	if !apierrors.IsNotFound(err) {
		return gate, wrap(err, "get gate %s", key)
	}
	gate = gatestatus.New(sub)
	if err := r.Create(ctx, gate); err != nil {
		if apierrors.IsAlreadyExists(err) { // the cache was behind; the next event brings it
			return nil, nil
		}
		return nil, fmt.Errorf("create gate %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).Info("created upgrade gate")
	return gate, nil
}

// writeStatus writes the gate's status only when it changed, and reports a changed
// decision as an Event on the Subscription and its pending plans. It also records a plan
// approved earlier whose record did not land (recordApproval).
func (r *GateReconciler) writeStatus(ctx context.Context, gate *tollgatev1alpha1.UpgradeGate, dec *approval.Decision, extra []metav1.Condition) error {
	key := client.ObjectKeyFromObject(gate)
	approved := ""
	if pending, ok := r.approvals.Load(key); ok {
		approved = pending.(string)
	}
	next, problems := gatestatus.Next(gate.Status, gatestatus.Observation{
		Generation:   gate.Generation,
		Subscription: dec.Subscription,
		Result:       dec.Result,
		Digest:       func() string { return engine.Digest(dec.Doc) },
		Extra:        extra,
		Approved:     approved,
		Now:          metav1.NewTime(r.now().Truncate(time.Second)),
	})
	blocked := 1.0
	if next.Decision.Allowed {
		blocked = 0
	}
	blockedSubscriptions.WithLabelValues(key.Namespace, key.Name).Set(blocked)
	if equality.Semantic.DeepEqual(gate.Status, next) {
		r.approvals.Delete(key)
		return nil
	}
	// A full update with the gate's resourceVersion: a gate changed meanwhile (an admin
	// edit) conflicts, and its event brings a fresh evaluation.
	old := gate.Status.Decision
	gate.Status = next
	if err := r.Status().Update(ctx, gate); err != nil {
		return fmt.Errorf("write status of gate %s: %w", key, err)
	}
	r.approvals.Delete(key)
	// Reported once the status is written, so a retried write does not report twice.
	r.reportProblems(ctx, gate, problems)
	if gatestatus.DecisionChanged(old, next.Decision) {
		r.reportDecision(old, next.Decision, dec.Document)
		outcome := "denied"
		if next.Decision.Allowed {
			outcome = "allowed"
		}
		decisionsTotal.WithLabelValues(outcome, next.Decision.BlockedBy).Inc()
	}
	return nil
}

// recordApproval records in the gate's status the plan approve approved, if any: a second
// write, only when something was approved (the decision behind it is already written). When
// it fails, the plan is remembered and the next status write records it.
func (r *GateReconciler) recordApproval(ctx context.Context, gate *tollgatev1alpha1.UpgradeGate, approved string) error {
	if approved == "" || gate.Status.Decision.LastApprovedInstallPlan == approved {
		return nil
	}
	gate.Status.Decision.LastApprovedInstallPlan = approved
	if err := r.Status().Update(ctx, gate); err != nil {
		key := client.ObjectKeyFromObject(gate)
		r.approvals.Store(key, approved)
		return fmt.Errorf("record approval of install plan %s in gate %s: %w", approved, key, err)
	}
	return nil
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
