package gatestatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
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
	Now   metav1.Time
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
	next.Conditions = mergeConditions(old.Conditions, append(conditions, o.Extra...), o.Now)
	next.Health = mergeConditions(old.Health, health, o.Now)
	next.Decision = stamped(old.Decision, decisionOf(old.Decision, res), func() string { return engine.Digest(head.Input) }, o.Now)
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
