package gatestatus

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// ExtensionObservation is everything one decision contributes to an ExtensionGate's status.
type ExtensionObservation struct {
	Generation int64
	Package    string
	Outcome    pin.Outcome
	// Pin is the ClusterExtension's pin as Tollgate leaves it.
	Pin string
	// Catalogs are the selected catalogs' content identities, "<name>@<digest ref>".
	Catalogs []string
	// Extra are the conditions Tollgate originates itself (PinOwned).
	Extra []metav1.Condition
	// Bypasses are the moves of the pin behind the gate that this decision found and the
	// status does not record yet, without their decision: each is recorded with what the
	// gate's status said of the version set then (bypass.PinDecision; on a first decision,
	// what this one says).
	Bypasses []tollgatev1alpha1.Bypass
	Now      metav1.Time
}

// NextExtension computes an ExtensionGate's status, with Next's rules: times move only when
// what they stamp changed, so an unchanged state gives an equal status and no write.
func NextExtension(old tollgatev1alpha1.ExtensionGateStatus, o ExtensionObservation) (tollgatev1alpha1.ExtensionGateStatus, []string) {
	head := o.Outcome.Head
	res := head.Result
	next := tollgatev1alpha1.ExtensionGateStatus{
		ObservedGeneration: o.Generation,
		Package:            o.Package,
		Installed:          o.Outcome.Installed,
		Pin:                o.Pin,
		Catalogs:           o.Catalogs,
		Candidates:         candidates(o.Outcome.Versions),
	}
	conditions, p1 := toConditions(res.Conditions, o.Generation)
	health, p2 := toConditions(res.Health, o.Generation)
	conditions = append(append(conditions, o.Extra...), DeniedBundleAdmitted(o.Outcome, o.Generation))
	next.Conditions = mergeConditions(old.Conditions, conditions, o.Now)
	next.Health = mergeConditions(old.Health, health, o.Now)
	next.Decision = stamped(old.Decision, decisionOf(old.Decision, res), func() string { return engine.Digest(head.Input) }, o.Now)
	then := old
	if old.Decision.EvaluatedAt == nil && old.Decision.PolicyRevision == "" {
		then = next
	}
	next.Bypasses = recordBypasses(old.Bypasses, o.Bypasses, func(b tollgatev1alpha1.Bypass) tollgatev1alpha1.BypassDecision {
		return bypass.PinDecision(then, b.To)
	})
	return next, append(p1, p2...)
}

// candidates are the bundles decided, highest version first, at most the CRD's 32.
func candidates(versions []pin.Version) []tollgatev1alpha1.Candidate {
	var out []tollgatev1alpha1.Candidate
	for _, v := range versions {
		for _, j := range v.Bundles {
			if len(out) == 32 {
				return out
			}
			out = append(out, tollgatev1alpha1.Candidate{
				Bundle: j.Candidate.Bundle.Name, Version: v.Version, Catalog: j.Candidate.Catalog,
				Allowed: j.Result.Decision.Allowed, BlockedBy: j.Result.Decision.BlockedBy(),
			})
		}
	}
	return out
}

// DeniedBundleAdmitted is the DeniedBundleAdmitted condition of an outcome: True, naming each denied
// bundle the pin admits that no exact pin can exclude and what an admin can do, or False.
func DeniedBundleAdmitted(out pin.Outcome, generation int64) metav1.Condition {
	c := metav1.Condition{Type: tollgatev1alpha1.ConditionDeniedBundleAdmitted, Status: metav1.ConditionFalse, Reason: "NoneAdmitted", ObservedGeneration: generation,
		Message: "every bundle the pin admits is allowed, or is the installed one"}
	if len(out.Unexcludable) == 0 {
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, "SameVersionBundleDenied"
	var b strings.Builder
	fmt.Fprintf(&b, "OLM v1 may install, at the pin %s, a bundle the policies denied: %s. No exact version excludes it: OLM v1 matches a pin ignoring build metadata and takes any bundle of the installed version it ranks first. ",
		out.Target, BundleNames(out.Unexcludable))
	b.WriteString("To keep it out: have the catalog remove or replace it; narrow the ClusterExtension's spec.source.catalog.selector to leave out its catalog, or set that ClusterCatalog's spec.availabilityMode to Unavailable; ")
	b.WriteString("list in spec.source.catalog.channels only channels that do not include it; or, if it is acceptable, waive its denial in this gate's spec.overrides")
	c.Message = b.String()
	return c
}

// BundleNames names judged bundles, "<bundle> of catalog <catalog> (<code>)".
func BundleNames(js []pin.Judged) string {
	var parts []string
	for _, j := range js {
		code := j.Result.Decision.BlockedBy()
		if code == "" {
			code = "not allowed"
		}
		parts = append(parts, fmt.Sprintf("%s of catalog %s (%s)", j.Candidate.Bundle.Name, j.Candidate.Catalog, code))
	}
	return strings.Join(parts, ", ")
}
