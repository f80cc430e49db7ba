package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// EventPinHandedBack is the event on a ClusterExtension whose ExtensionGate is gone.
const EventPinHandedBack = "PinHandedBack"

// handBack removes Tollgate's pin record from the ClusterExtension name, whose ExtensionGate is
// gone: the pin stays where it is, and the extension is its owner's to edit again (the gate lock
// guards only one that carries the record). A ClusterExtension without the record is left alone.
func (r *ExtensionReconciler) handBack(ctx context.Context, name string) error {
	ext := &olmv1.ClusterExtension{}
	if err := r.Get(ctx, types.NamespacedName{Name: name}, ext); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, recorded := ext.Annotations[tollgatev1alpha1.PinRecordAnnotation]; !recorded {
		return nil
	}
	base := ext.DeepCopy()
	delete(ext.Annotations, tollgatev1alpha1.PinRecordAnnotation)
	if err := r.Patch(ctx, ext, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("remove the pin record of ClusterExtension %s, whose ExtensionGate is gone: %w", name, err))
	}
	r.Recorder.Event(ext, corev1.EventTypeNormal, EventPinHandedBack, fmt.Sprintf(
		"ExtensionGate %s is gone: Tollgate no longer gates this extension; it left spec.source.catalog.version at %q and removed its pin record (annotation %s)",
		name, pinOf(ext), tollgatev1alpha1.PinRecordAnnotation))
	return nil
}
