package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// +kubebuilder:rbac:groups=olm.operatorframework.io,resources=clusterextensions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=olm.operatorframework.io,resources=clustercatalogs,verbs=get;list;watch
// +kubebuilder:rbac:groups=tollgate.dev,resources=extensiongates,verbs=get;list;watch
// +kubebuilder:rbac:groups=tollgate.dev,resources=extensiongates/status,verbs=get;update;patch

// DefaultHeldRecheck is how often a gate that holds a successor is decided again without a
// change it watches (the extension, its gate, the catalogs, the policies and the operands).
const DefaultHeldRecheck = time.Minute

// ExtensionReconciler owns the version pin of every OLM v1 ClusterExtension an ExtensionGate
// gates: it keeps spec.source.catalog.version an exact version, the installed one or a successor
// the policies allowed whole (package pin). The pin it owns is recorded in the gate's status
// (status.pin), which only Tollgate writes; each pin it sets also carries its decision on the
// ClusterExtension (PinRecordAnnotation), for audit only. A move of a pin Tollgate already
// owns goes before its record (pinsFirst): the record is the next reconcile's status write.
type ExtensionReconciler struct {
	client.Client
	// APIReader reads a gate live, to write its status again after a conflict.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Policies  *Policies
	Input     input.Config
	// Catalogs reads catalogd's content, once per digest.
	Catalogs *catalogd.Client
	// Reevaluate is the safety-net period; HeldRecheck, that of a gate holding a successor.
	Reevaluate  time.Duration
	HeldRecheck time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DecisionLog logs changed decisions and every pin set; nil logs nothing.
	DecisionLog *decisionlog.Logger

	// written holds the gates' status as this manager last wrote it, until the cache has it:
	// the pin owned is the gate's status.pin, and a pin decided on a status the cache trails
	// would take back Tollgate's own.
	written extensionGateWrites
	// unrecorded holds, per gate, the pin this manager set whose record (the gate's status.pin)
	// is not written yet: it waits for the next reconcile (pinsFirst), or its write failed.
	// types.NamespacedName → unrecordedPin.
	unrecorded sync.Map

	operands *operandWatches // the operand kinds watched, and whose gates they decide
	reader   client.Reader   // the cache (operands too), minus the kinds the API server does not serve
}

// unrecordedPin is a pin Tollgate set and has not recorded yet, the ClusterExtension it set it
// on (its UID: one recreated under the same name starts its generations again) and the
// generation its write gave it: any later change of its spec, by anyone, changes the
// generation; OLM v1's writes of its status do not.
type unrecordedPin struct {
	pin        string
	uid        types.UID
	generation int64
}

// Reconcile is read → decide → pin → record for the ExtensionGate req names. A move of the
// pin Tollgate owns is recorded by the reconcile that follows (pinsFirst); any other pin is
// recorded at once.
func (r *ExtensionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.Policies.Loaded() {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	gate := &tollgatev1alpha1.ExtensionGate{}
	if err := r.Get(ctx, req.NamespacedName, gate); err != nil {
		if apierrors.IsNotFound(err) {
			forgetExtension(req.Name)
			r.operands.forget(req.NamespacedName)
			r.written.forget(req.NamespacedName)
			r.unrecorded.Delete(req.NamespacedName)
			return ctrl.Result{}, r.handBack(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	gate = r.written.latest(req.NamespacedName, gate)
	ext := &olmv1.ClusterExtension{}
	if err := r.Get(ctx, req.NamespacedName, ext); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.writeMissing(ctx, gate)
	}
	g := pin.Gatherer{Reader: r.Client, Operands: r.reader, Content: r.Catalogs, Mapper: r.RESTMapper(), Config: r.Input, Now: r.now()}
	facts, err := g.Gather(ctx, gate, ext)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("gather the facts of ClusterExtension %s: %w", ext.Name, err)
	}
	if err := r.operands.watch(ctx, req.NamespacedName, facts.OperandKinds, nil); err != nil {
		return ctrl.Result{}, err
	}
	out := pin.Decide(ctx, facts.Facts, r.Policies)
	reportHeld(gate.Name, out)
	r.reportDeniedAdmitted(gate, out, gatestatus.DeniedBundleAdmitted(out, gate.Generation))
	move := r.nextPin(gate, ext, out)
	var bypassed []tollgatev1alpha1.Bypass
	if move.write {
		bypassed = r.pinBypasses(ctx, gate, ext, move) // before the write that replaces who set the pin
		if err := r.setPin(ctx, ext, move, out); err != nil {
			return ctrl.Result{}, err
		}
		// Set: until its record is written, the pin is still Tollgate's (nextPin).
		r.unrecorded.Store(req.NamespacedName, unrecordedPin{pin: move.pin, uid: ext.UID, generation: ext.Generation})
		if pinsFirst(move, bypassed) {
			return ctrl.Result{RequeueAfter: r.requeueAfter(out)}, nil
		}
	}
	if err := r.recordStatus(ctx, gate, ext, facts, out, move, bypassed); err != nil {
		return ctrl.Result{}, err
	}
	if move.owned { // recorded: status.pin is the pin as it is now
		r.unrecorded.Delete(req.NamespacedName)
	}
	return ctrl.Result{RequeueAfter: r.requeueAfter(out)}, nil
}

// pinsFirst says whether the record of move, a pin just set, waits for the next reconcile:
// when the pin moved was Tollgate's already (Moved, Withdrawn) and there is no bypass to
// record. Then the pin's own event queues that reconcile behind the pins already queued, so a
// catalog's new revision moves every pin before it writes their records: one write each
// instead of two on the way to the pins, the records after. A pin taken back or adopted, and
// a bypass, are recorded at once.
func pinsFirst(move pinMove, bypassed []tollgatev1alpha1.Bypass) bool {
	return move.tookBack == nil && len(bypassed) == 0 && (move.reason == "Moved" || move.reason == "Withdrawn")
}

// recordStatus writes the gate's status, with the bypasses to record. Once a pin is set, its
// record (status.pin) must follow, or the next decision would take Tollgate's own pin back as
// someone else's: a write that meets a newer gate is made again on it.
func (r *ExtensionReconciler) recordStatus(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension, facts pin.Gathered, out pin.Outcome, move pinMove, bypassed []tollgatev1alpha1.Bypass) error {
	err := r.writeStatus(ctx, gate, ext, facts, out, move, bypassed)
	if err == nil || !move.write || !apierrors.IsConflict(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := &tollgatev1alpha1.ExtensionGate{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(gate), fresh); err != nil {
			return err
		}
		return r.writeStatus(ctx, fresh, ext, facts, out, move, bypassed)
	})
}

func (r *ExtensionReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// requeueAfter is when to decide again without a change: at the head's recheckAt, within
// HeldRecheck while a successor is held, else at the safety-net period.
func (r *ExtensionReconciler) requeueAfter(out pin.Outcome) time.Duration {
	wait := r.Reevaluate
	if len(out.Versions) > 0 && out.Target != out.Versions[0].Version {
		wait = min(wait, r.HeldRecheck)
	}
	if at := out.Head.Result.RecheckAt; !at.IsZero() {
		wait = min(wait, max(time.Until(at), time.Second))
	}
	return wait
}

// writeStatus records the outcome in the gate's status when it changed: status.pin is the pin
// Tollgate set or accepted, and stays as it was when Tollgate owns none (Audit, nothing
// installed); the bypasses it records are reported once written.
func (r *ExtensionReconciler) writeStatus(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension, facts pin.Gathered, out pin.Outcome, move pinMove, bypassed []tollgatev1alpha1.Bypass) error {
	pkg := ""
	if ext.Spec.Source.Catalog != nil {
		pkg = ext.Spec.Source.Catalog.PackageName
	}
	owned := gate.Status.Pin
	if move.owned {
		owned = move.pin
	}
	next, problems := gatestatus.NextExtension(gate.Status, gatestatus.ExtensionObservation{
		Generation: gate.Generation, Package: pkg, Outcome: out, Pin: owned,
		Catalogs: facts.Digests, Extra: []metav1.Condition{move.condition(gate.Generation)}, Bypasses: bypassed, Now: metav1.NewTime(r.now()),
	})
	for _, p := range problems {
		r.Recorder.Event(gate, "Warning", "InvalidPolicyResult", p)
	}
	if equality.Semantic.DeepEqual(gate.Status, next) {
		return nil
	}
	if gatestatus.DecisionChanged(gate.Status.Decision, next.Decision) {
		logf.FromContext(ctx).Info("decision changed", "allowed", next.Decision.Allowed, "blockedBy", next.Decision.BlockedBy, "installed", out.Installed, "pin", move.pin)
		r.DecisionLog.Decided(out.Head.Input, out.Head.Result)
	}
	old, before := gate.Status, gate.ResourceVersion
	gate.Status = next
	if err := r.updateStatus(ctx, gate, before); err != nil {
		return err
	}
	r.reportPinBypasses(gate, ext, bypass.Added(old.Bypasses, next.Bypasses))
	r.reportHold(ext, old, next)
	return nil
}

// reportHold announces a successor becoming held, as a Subscription's UpgradeBlocked does: a
// Warning on the ClusterExtension when the gate's PinOwned turns Held. The release is the
// move that ends the hold (PinMoved, movedEvent).
func (r *ExtensionReconciler) reportHold(ext *olmv1.ClusterExtension, old, next tollgatev1alpha1.ExtensionGateStatus) {
	was := meta.FindStatusCondition(old.Conditions, tollgatev1alpha1.ConditionPinOwned)
	now := meta.FindStatusCondition(next.Conditions, tollgatev1alpha1.ConditionPinOwned)
	if now == nil || now.Reason != "Held" || was != nil && was.Reason == "Held" {
		return
	}
	r.Recorder.Event(ext, corev1.EventTypeWarning, EventUpgradeBlocked, now.Message)
}

// writeMissing records that the gated ClusterExtension does not exist.
func (r *ExtensionReconciler) writeMissing(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate) error {
	next := gate.Status.DeepCopy()
	next.ObservedGeneration = gate.Generation
	changed := meta.SetStatusCondition(&next.Conditions, metav1.Condition{
		Type: tollgatev1alpha1.ConditionPinOwned, Status: metav1.ConditionFalse, Reason: "ExtensionNotFound",
		Message: fmt.Sprintf("no ClusterExtension %s: create it, or delete this gate", gate.Name), ObservedGeneration: gate.Generation,
		LastTransitionTime: metav1.NewTime(r.now()),
	})
	if !changed && next.ObservedGeneration == gate.Status.ObservedGeneration {
		return nil
	}
	before := gate.ResourceVersion
	gate.Status = *next
	return r.updateStatus(ctx, gate, before)
}

// updateStatus writes gate's status, which had resourceVersion before, and remembers the
// gate as written until the cache has it.
func (r *ExtensionReconciler) updateStatus(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate, before string) error {
	key := client.ObjectKeyFromObject(gate)
	if err := r.Status().Update(ctx, gate); err != nil {
		r.written.forget(key)
		return err
	}
	r.written.record(key, before, gate)
	return nil
}

func keyOf(name string) types.NamespacedName { return types.NamespacedName{Name: name} }
