package controllers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// reportDeniedAdmitted records a Warning event on the gate when the set of denied bundles the
// pin admits changes to a non-empty one (the condition's message changed), and sets the
// metric series, one per bundle.
func (r *ExtensionReconciler) reportDeniedAdmitted(gate *tollgatev1alpha1.ExtensionGate, out pin.Outcome, c metav1.Condition) {
	for _, j := range out.Unexcludable {
		deniedAdmittedBundles.WithLabelValues(gate.Name, j.Candidate.Catalog, j.Candidate.Bundle.Name, blockedBy(j.Result)).Set(1)
	}
	if c.Status != metav1.ConditionTrue {
		return
	}
	for _, old := range gate.Status.Conditions {
		if old.Type == c.Type && old.Status == c.Status && old.Message == c.Message {
			return
		}
	}
	r.Recorder.Event(gate, corev1.EventTypeWarning, tollgatev1alpha1.ConditionDeniedBundleAdmitted, c.Message)
}
