package controllers

import (
	"context"
	"fmt"
	"strings"

	bsemver "github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// pinMove is what becomes of a ClusterExtension's pin, and the PinOwned condition saying so.
type pinMove struct {
	pin     string // the pin as Tollgate leaves it
	write   bool   // set pin (and its record) on the ClusterExtension
	owned   bool
	reason  string
	message string
	event   string // the event to record when the write lands; "" for none
	// tookBack is the pin someone else set, which this one takes back; nil for none.
	tookBack *string
}

func (m pinMove) condition(generation int64) metav1.Condition {
	status := metav1.ConditionTrue
	if !m.owned {
		status = metav1.ConditionFalse
	}
	return metav1.Condition{Type: tollgatev1alpha1.ConditionPinOwned, Status: status, Reason: m.reason, Message: m.message, ObservedGeneration: generation}
}

// nextPin decides the pin from the outcome. The pin Tollgate owns is the one its gate's status
// records (status.pin, which only Tollgate writes), or the one this manager set and has not
// recorded yet, the ClusterExtension's spec unchanged since (setUnrecorded); any other is
// taken back at once, whatever the ClusterExtension's annotations say. Tollgate's own pin,
// once OLM v1 installed it, moves to the target; before that it stays while it is still
// allowed whole, and is taken back when it is not. Never in Audit mode, nor before a first
// install.
func (r *ExtensionReconciler) nextPin(gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension, out pin.Outcome) pinMove {
	current := pinOf(ext)
	owned := gate.Status.Pin != "" && current == gate.Status.Pin || r.setUnrecorded(ext)
	switch {
	case out.Installed == "":
		return pinMove{pin: current, reason: "NotInstalled", message: fmt.Sprintf("nothing is installed yet: OLM v1 installs what spec.source.catalog.version (%q) selects, and Tollgate gates the upgrades after that first install", current)}
	case gate.Spec.Mode.Or(r.Input.WithDefaults().DefaultMode) == tollgatev1alpha1.ModeAudit:
		return pinMove{pin: current, reason: "Audit", message: fmt.Sprintf("mode Audit: Tollgate decides and reports, and leaves spec.source.catalog.version (%q) as it is; it would pin %s", current, out.Target)}
	case !owned && samePin(current, out.Target):
		return pinMove{pin: current, write: true, owned: true, reason: "Adopted", message: fmt.Sprintf("Tollgate owns spec.source.catalog.version, found at %s", current)}
	case !owned:
		msg := fmt.Sprintf("spec.source.catalog.version was %q, which Tollgate did not set (its pin: %q, in this gate's status); Tollgate set it back to %s", current, gate.Status.Pin, out.Target)
		return pinMove{pin: out.Target, write: true, owned: true, reason: "Reclaimed", message: msg, event: "PinReclaimed", tookBack: &current}
	case out.Pinned != nil && withdrawable(*out.Pinned) && !samePin(current, out.Target):
		msg := fmt.Sprintf("Tollgate's pin %s is not installed yet and %s; Tollgate set it back to %s", current, notAllowedWhole(*out.Pinned), out.Target)
		return pinMove{pin: out.Target, write: true, owned: true, reason: "Withdrawn", message: msg, event: "PinWithdrawn"}
	case below(out.Installed, current):
		return pinMove{pin: current, owned: true, reason: "Upgrading", message: fmt.Sprintf("OLM v1 is installing %s, the pin Tollgate set, still allowed (installed: %s)", current, out.Installed)}
	case !samePin(current, out.Target):
		return pinMove{pin: out.Target, write: true, owned: true, reason: "Moved", message: fmt.Sprintf("Tollgate moved the pin from %s to %s, which the policies allow", current, out.Target), event: movedEvent(gate)}
	}
	return keptPin(current, out)
}

// movedEvent is the event of a move of the pin Tollgate owns: PinMoved when the move ends a
// hold (the gate held a successor), as a Subscription's UpgradeAllowed does; none for a move
// the policies allowed at once, which, as an approval of an InstallPlan, the pin's record, the
// gate's status that records it and the decision log say.
func movedEvent(gate *tollgatev1alpha1.ExtensionGate) string {
	if c := meta.FindStatusCondition(gate.Status.Conditions, tollgatev1alpha1.ConditionPinOwned); c != nil && c.Reason == "Held" {
		return "PinMoved"
	}
	return ""
}

// setUnrecorded says whether ext's pin is the one this manager set and has not recorded, on
// this very ClusterExtension (its UID), its spec unchanged since that write (its generation):
// Tollgate's own pin, not someone else's (no bypass, nothing to take back), whose record the
// next status write makes.
func (r *ExtensionReconciler) setUnrecorded(ext *olmv1.ClusterExtension) bool {
	v, ok := r.unrecorded.Load(keyOf(ext.Name))
	u, _ := v.(unrecordedPin)
	return ok && u.pin == pinOf(ext) && u.uid == ext.UID && u.generation == ext.Generation
}

// keptPin says why a pin Tollgate owns, at its target, stays.
func keptPin(current string, out pin.Outcome) pinMove {
	switch {
	case out.GateError != "":
		return pinMove{pin: current, owned: true, reason: "InvalidGate", message: fmt.Sprintf("pinned at %s: the gate follows nothing until it is fixed: %s", current, out.GateError)}
	case len(out.Unexcludable) > 0:
		return pinMove{pin: current, owned: true, reason: "Unexcludable", message: fmt.Sprintf("pinned at %s, which admits %s, denied: no exact version excludes it (see condition %s)", current, gatestatus.BundleNames(out.Unexcludable), tollgatev1alpha1.ConditionDeniedBundleAdmitted)}
	case len(out.Versions) > 0 && out.Versions[0].Version != current:
		return pinMove{pin: current, owned: true, reason: "Held", message: fmt.Sprintf("pinned at %s: %s is held (%s)%s%s", current, out.Versions[0].Version, blockedBy(out.Head.Result), refused(out), undecided(out))}
	case !out.Head.Result.Decision.Allowed:
		return pinMove{pin: current, owned: true, reason: "Held", message: fmt.Sprintf("pinned at %s: no successor can be judged (%s)%s", current, blockedBy(out.Head.Result), refused(out))}
	}
	return pinMove{pin: current, owned: true, reason: "Pinned", message: fmt.Sprintf("pinned at %s; no successor within the gate's range and channels%s", current, refused(out))}
}

// withdrawable says whether Tollgate takes back its own pin v, not yet installed: OLM v1 would
// install nothing for it, or the policies reject one of its bundles for more than the
// extension being unsettled, which every pin not yet installed is (pin.Unsettled): the catalog
// deprecated it, a policy no longer allows it, a bundle appeared that is not allowed.
func withdrawable(v pin.Version) bool {
	return len(v.Bundles) == 0 || len(v.Rejected()) > 0
}

// notAllowedWhole says why a version is not a pin Tollgate keeps.
func notAllowedWhole(v pin.Version) string {
	switch {
	case len(v.Ambiguous) > 0:
		return fmt.Sprintf("OLM v1 refuses to install it: catalogs %s of the same priority serve it", strings.Join(v.Ambiguous, ", "))
	case len(v.Bundles) == 0:
		return "OLM v1 would install no bundle for it"
	}
	return fmt.Sprintf("the policies no longer allow %s", gatestatus.BundleNames(v.Rejected()))
}

// undecided says how many versions were left undecided below those decided (pin.MaxJudged);
// "" for none.
func undecided(out pin.Outcome) string {
	if out.Undecided == 0 {
		return ""
	}
	return fmt.Sprintf("; %d lower versions are not decided (at most %d bundles are judged per decision): narrow the gate's spec.version to leave out the versions held, and the lower ones are decided", out.Undecided, pin.MaxJudged)
}

// refused says which versions above the pin OLM v1 refuses to install (catalogs of the same
// priority serve them); "" for none.
func refused(out pin.Outcome) string {
	var parts []string
	for _, v := range out.Refused {
		parts = append(parts, fmt.Sprintf("%s (catalogs %s of the same priority serve it)", v.Version, strings.Join(v.Ambiguous, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; OLM v1 refuses " + strings.Join(parts, ", ")
}

func pinOf(ext *olmv1.ClusterExtension) string {
	if ext.Spec.Source.Catalog == nil {
		return ""
	}
	return ext.Spec.Source.Catalog.Version
}

// samePin says whether pins a and b admit the same bundles: equal, or the same version but for
// build metadata, which OLM v1's matching ignores.
func samePin(a, b string) bool {
	va, errA := bsemver.Parse(a)
	vb, errB := bsemver.Parse(b)
	return a == b || errA == nil && errB == nil && va.Compare(vb) == 0
}

// below says whether version a is lower than b; a b that is no version (a range) is not.
func below(a, b string) bool {
	va, errA := bsemver.Parse(a)
	vb, errB := bsemver.Parse(b)
	return errA == nil && errB == nil && va.LT(vb)
}

func blockedBy(res *engine.Result) string {
	if code := res.Decision.BlockedBy(); code != "" {
		return code
	}
	return "not allowed"
}

// setPin writes the pin and its record in one patch, which fails when the ClusterExtension
// changed since it was read: the next reconcile decides on what changed.
func (r *ExtensionReconciler) setPin(ctx context.Context, ext *olmv1.ClusterExtension, move pinMove, out pin.Outcome) error {
	if ext.Spec.Source.Catalog == nil {
		return fmt.Errorf("ClusterExtension %s has no spec.source.catalog to pin", ext.Name)
	}
	base := ext.DeepCopy()
	rec := tollgatev1alpha1.PinRecord{Version: move.pin, Installed: out.Installed, TookBackFrom: move.tookBack, PinnedAt: metav1.NewTime(r.now())}
	if d, ok := decisionFor(out, move.pin); ok {
		rec.PolicyRevision, rec.InputDigest = d.Result.Revision, engine.Digest(d.Input)
	}
	ext.Spec.Source.Catalog.Version = move.pin
	if ext.Annotations == nil {
		ext.Annotations = map[string]string{}
	}
	ext.Annotations[tollgatev1alpha1.PinRecordAnnotation] = rec.String()
	release, ok := r.DecisionLog.Hold()
	if !ok {
		return fmt.Errorf("pin ClusterExtension %s at %s: the decision log is closing, and a pin is never set unlogged", ext.Name, move.pin)
	}
	defer release()
	if err := r.Patch(ctx, ext, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("pin ClusterExtension %s at %s: %w", ext.Name, move.pin, err)
	}
	logf.FromContext(ctx).Info("pinned", "version", move.pin, "installed", out.Installed, "reason", move.reason)
	pinsTotal.WithLabelValues(move.reason).Inc()
	j, ok := decisionFor(out, move.pin)
	if !ok {
		j = out.Head
	}
	r.DecisionLog.Pin(j.Input, j.Result, decisionlog.PinResult{Extension: ext.Name, From: pinOf(base), To: move.pin, Installed: out.Installed, Reason: move.reason})
	if move.event != "" {
		r.Recorder.Event(ext, eventType(move.event), move.event, move.message)
	}
	return nil
}

// decisionFor is the decision on the first bundle of version v, when v is a successor.
func decisionFor(out pin.Outcome, v string) (pin.Judged, bool) {
	for _, ver := range out.Versions {
		if ver.Version == v && len(ver.Bundles) > 0 {
			return ver.Bundles[0], true
		}
	}
	return pin.Judged{}, false
}

func eventType(reason string) string {
	if reason == "PinReclaimed" || reason == "PinWithdrawn" {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}
