package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
)

// pinBypasses is the move of ext's pin behind gate, when move takes it back or adopts it while
// Tollgate owned a pin: the gate's status.pin records one, its PinOwned condition said so, and
// the pin now admits other bundles. A first adoption (no pin owned yet, or none since Audit
// mode or a missing extension) is no bypass, nor is a pin moved only in build metadata, which
// OLM v1's matching ignores. Who moved it is read from the ClusterExtension as the API server
// has it, before Tollgate's own write replaces its managed fields entry; nil when there is no
// bypass, or it is recorded already.
func (r *ExtensionReconciler) pinBypasses(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension, move pinMove) []tollgatev1alpha1.Bypass {
	current, owned := pinOf(ext), gate.Status.Pin
	if move.reason != "Reclaimed" && move.reason != "Adopted" || owned == "" || samePin(current, owned) ||
		!meta.IsStatusConditionTrue(gate.Status.Conditions, tollgatev1alpha1.ConditionPinOwned) ||
		bypass.Recorded(gate.Status.Bypasses, ext.UID, tollgatev1alpha1.BypassFieldVersion, current) {
		return nil
	}
	by, at := setterOf(r.liveExtension(ctx, ext), "spec", "source", "catalog", "version")
	return []tollgatev1alpha1.Bypass{{
		Kind: tollgatev1alpha1.BypassKindClusterExtension, Name: ext.Name, UID: ext.UID,
		Field: tollgatev1alpha1.BypassFieldVersion, From: owned, To: current, By: by, At: at,
		SeenAt: metav1.NewTime(r.now().Truncate(time.Second)),
	}}
}

// liveExtension is ext as the API server has it now, with its managed fields; nil when it
// cannot be read, or no longer has ext's UID and pin.
func (r *ExtensionReconciler) liveExtension(ctx context.Context, ext *olmv1.ClusterExtension) client.Object {
	if r.APIReader == nil {
		return nil
	}
	got := &olmv1.ClusterExtension{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(ext), got); err != nil || got.UID != ext.UID || pinOf(got) != pinOf(ext) {
		return nil
	}
	return got
}

// reportPinBypasses reports the bypasses gate's status has just recorded (reportBypass), on
// ext and the gate.
func (r *ExtensionReconciler) reportPinBypasses(gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension, recorded []tollgatev1alpha1.Bypass) {
	for _, b := range recorded {
		reportBypass(r.Recorder, r.DecisionLog, gate, ext, b)
	}
}
