package evaluation

import (
	"slices"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
)

// Report is the output of `tollgate eval`; cmd/tollgate/README.md documents it.
type Report struct {
	Now            string             `json:"now"`
	PolicyRevision string             `json:"policyRevision"`
	Subscriptions  []Subscription     `json:"subscriptions"`
	InstallPlans   []approval.Verdict `json:"installPlans"`
	CatalogSources []CatalogSource    `json:"catalogSources"`
	// Extensions are the OLM v1 ClusterExtensions, when the snapshot has any.
	Extensions []Extension `json:"extensions,omitempty"`
}

// Subscription is one Subscription's decision and the gate status that records it.
type Subscription struct {
	Namespace    string             `json:"namespace"`
	Name         string             `json:"name"`
	Package      string             `json:"package"`
	InstalledCSV string             `json:"installedCSV"`
	CurrentCSV   string             `json:"currentCSV"`
	Approval     string             `json:"approval"`
	Mode         string             `json:"mode"`
	State        string             `json:"state"`
	UpToDate     bool               `json:"upToDate"`
	Decision     Decision           `json:"decision"`
	Conditions   []engine.Condition `json:"conditions"`
	Health       []engine.Condition `json:"health"`
	// Status is the UpgradeGate status the manager would write.
	Status tollgatev1alpha1.UpgradeGateStatus `json:"status"`
}

// Decision is whether the upgrade is allowed, and every denial, overridden or not.
type Decision struct {
	Allowed bool                      `json:"allowed"`
	Denials []tollgatev1alpha1.Denial `json:"denials"`
}

// CatalogSource is one CatalogSource's validity and health.
type CatalogSource struct {
	Namespace  string             `json:"namespace"`
	Name       string             `json:"name"`
	Valid      bool               `json:"valid"`
	Violations []engine.Violation `json:"violations"`
	Healthy    string             `json:"healthy"`
	// LastObservedState is status.connectionState.lastObservedState ("" without status).
	LastObservedState string `json:"lastObservedState"`
}

// Denied says whether any Subscription's upgrade is denied, or any ClusterExtension's
// highest successor held.
func (r *Report) Denied() bool {
	return slices.ContainsFunc(r.Subscriptions, func(s Subscription) bool { return !s.Decision.Allowed }) ||
		slices.ContainsFunc(r.Extensions, func(x Extension) bool { return !x.Decision.Allowed && len(x.Status.Candidates) > 0 })
}

// InvalidCatalog says whether any CatalogSource is invalid.
func (r *Report) InvalidCatalog() bool {
	return slices.ContainsFunc(r.CatalogSources, func(c CatalogSource) bool { return !c.Valid })
}

// StandingCodes are the codes of the denials not overridden, in the policies' order.
func (d Decision) StandingCodes() []string {
	var codes []string
	for _, den := range d.Denials {
		if !den.Overridden {
			codes = append(codes, den.Code)
		}
	}
	return codes
}

// OverriddenCodes are the codes of the denials an admin overrode.
func (d Decision) OverriddenCodes() []string {
	var codes []string
	for _, den := range d.Denials {
		if den.Overridden {
			codes = append(codes, den.Code)
		}
	}
	return codes
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
