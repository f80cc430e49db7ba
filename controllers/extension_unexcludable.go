package controllers

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// deniedAdmitted is the DeniedBundleAdmitted condition of an outcome: True, naming each denied
// bundle the pin admits that no exact pin can exclude and what an admin can do, or False.
func deniedAdmitted(out pin.Outcome, generation int64) metav1.Condition {
	c := metav1.Condition{Type: tollgatev1alpha1.ConditionDeniedBundleAdmitted, Status: metav1.ConditionFalse, Reason: "NoneAdmitted", ObservedGeneration: generation,
		Message: "every bundle the pin admits is allowed, or is the installed one"}
	if len(out.Unexcludable) == 0 {
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, "SameVersionBundleDenied"
	var b strings.Builder
	fmt.Fprintf(&b, "OLM v1 may install, at the pin %s, a bundle the policies denied: %s. No exact version excludes it: OLM v1 matches a pin ignoring build metadata and takes any bundle of the installed version it ranks first. ",
		out.Target, bundleNames(out.Unexcludable))
	b.WriteString("To keep it out: have the catalog remove or replace it; narrow the ClusterExtension's spec.source.catalog.selector to leave out its catalog, or set that ClusterCatalog's spec.availabilityMode to Unavailable; ")
	b.WriteString("list in spec.source.catalog.channels only channels that do not include it; or, if it is acceptable, waive its denial in this gate's spec.overrides")
	c.Message = b.String()
	return c
}

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
