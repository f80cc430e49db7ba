package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// EventBypassed is the reason of the Warning a bypass gives, on the object changed and on its
// gate: an InstallPlan approved or run unapproved, or a ClusterExtension's pin moved, by
// someone else.
const EventBypassed = "Bypassed"

// bypassesTotal counts the bypasses the gates recorded, by the kind of object changed. A plan
// several Subscriptions share counts once for each gate it bypassed.
var bypassesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "tollgate_bypasses_total",
	Help: "Changes only Tollgate is meant to make, made by someone else, by kind: InstallPlan (a Manual plan approved without Tollgate's approval record, or run unapproved), ClusterExtension (its pin moved away from Tollgate's); each counted once, when its gate records it.",
}, []string{"kind"})

func init() {
	metrics.Registry.MustRegister(bypassesTotal)
	// Both series exist from the start, so that an alert on their increase sees the first one.
	bypassesTotal.WithLabelValues(tollgatev1alpha1.BypassKindInstallPlan)
	bypassesTotal.WithLabelValues(tollgatev1alpha1.BypassKindClusterExtension)
}

// reportBypass reports b, which gate has just recorded in its status (so it is reported once):
// a Warning on the object changed (obj, nil when gone) and on the gate, the metric, and the
// decision log.
func reportBypass(rec record.EventRecorder, log *decisionlog.Logger, gate client.Object, obj runtime.Object, b tollgatev1alpha1.Bypass) {
	name := gate.GetName()
	if gate.GetNamespace() != "" {
		name = gate.GetNamespace() + "/" + name
	}
	msg := bypass.Summary(b, gate.GetNamespace(), name) + ". The field manager names a client; the API server's audit log names the user."
	if obj != nil {
		rec.Event(obj, corev1.EventTypeWarning, EventBypassed, msg)
	}
	rec.Event(gate, corev1.EventTypeWarning, EventBypassed, msg)
	bypassesTotal.WithLabelValues(b.Kind).Inc()
	kind := "UpgradeGate"
	if _, ok := gate.(*tollgatev1alpha1.ExtensionGate); ok {
		kind = "ExtensionGate"
	}
	log.Bypass(decisionlog.BypassResult{GateKind: kind, Gate: engine.ObjectKey{Namespace: gate.GetNamespace(), Name: gate.GetName()}, Bypass: b})
}

// setterOf is who last set the field at path of obj, as its managedFields say: the field
// manager and the time of its entry, or UnknownFieldManager and no time.
func setterOf(obj client.Object, path ...string) (string, *metav1.Time) {
	if obj == nil {
		return tollgatev1alpha1.UnknownFieldManager, nil
	}
	manager, at, ok := bypass.LastSetBy(obj.GetManagedFields(), path...)
	if !ok || manager == "" {
		return tollgatev1alpha1.UnknownFieldManager, nil
	}
	return manager, at
}
