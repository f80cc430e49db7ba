package v1alpha1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mode says whether Tollgate acts on its decisions.
//
// +kubebuilder:validation:Enum=Enforce;Audit
type Mode string

const (
	// ModeEnforce approves InstallPlans that policy allows.
	ModeEnforce Mode = "Enforce"
	// ModeAudit decides and reports, but never approves.
	ModeAudit Mode = "Audit"
	// DefaultMode is the mode of a gate whose spec.mode is empty, unless the manager is told
	// otherwise (--default-mode).
	DefaultMode = ModeEnforce
)

// Or is m, or def when m is empty: the effective mode of a gate whose spec.mode is m, under
// the manager's --default-mode def.
func (m Mode) Or(def Mode) Mode {
	if m != "" {
		return m
	}
	return def
}

// ParseMode returns the mode s names, or an error saying which modes there are.
func ParseMode(s string) (Mode, error) {
	if m := Mode(s); m == ModeEnforce || m == ModeAudit {
		return m, nil
	}
	return "", fmt.Errorf("%q: use Enforce or Audit", s)
}

// Override waives one denial code for this Subscription.
type Override struct {
	// Code is the denial code to waive, e.g. OperatorNotUpgradeable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]*$`
	Code string `json:"code"`
	// Reason says why, for the audit trail.
	// +kubebuilder:validation:MinLength=1
	Reason string `json:"reason"`
	// Expires, when set, ends the override; an expired override is ignored and reported.
	// +optional
	Expires *metav1.Time `json:"expires,omitempty"`
}

// UpgradeGateSpec is edited by admins; Tollgate never overwrites it.
type UpgradeGateSpec struct {
	// Mode is Enforce (approve allowed InstallPlans) or Audit (never approve).
	// Empty means the manager's --default-mode.
	// +optional
	Mode Mode `json:"mode,omitempty"`
	// Overrides waive denial codes for this Subscription.
	// +optional
	// +listType=map
	// +listMapKey=code
	// +kubebuilder:validation:MaxItems=32
	Overrides []Override `json:"overrides,omitempty"`
}

// CatalogStatus is Tollgate's view of one catalog visible to the Subscription.
type CatalogStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Healthy is True when the registry connection is READY, Unknown without status.
	Healthy metav1.ConditionStatus `json:"healthy"`
	// LastObservedState is the catalog's connection state as OLM last saw it.
	// +optional
	LastObservedState string `json:"lastObservedState,omitempty"`
	// Source is true for the Subscription's own source catalog.
	// +optional
	Source bool `json:"source,omitempty"`
	// Valid is false when the catalog's spec does not name exactly one source.
	Valid bool `json:"valid"`
}

// Denial is one reason not to upgrade.
type Denial struct {
	// Code is the stable name of the rule, e.g. OperatorNotUpgradeable.
	Code string `json:"code"`
	// Message says, for a person, what blocks the upgrade.
	Message string `json:"message"`
	// Overridden is true when an UpgradeGate override waives this denial.
	// +optional
	Overridden bool `json:"overridden,omitempty"`
	// OverrideReason is the admin's reason when Overridden.
	// +optional
	OverrideReason string `json:"overrideReason,omitempty"`
	// Source is the policy file, row and rule that produced the denial.
	// +optional
	Source string `json:"source,omitempty"`
}

// Decision is the outcome of the last policy evaluation.
type Decision struct {
	// Allowed is true only when the policies ran and no denial stands.
	Allowed bool `json:"allowed"`
	// BlockedBy is the code of the first denial that stands, for dashboards.
	// +optional
	BlockedBy string `json:"blockedBy,omitempty"`
	// Denials, standing ones first, capped in number.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Denials []Denial `json:"denials,omitempty"`
	// PolicyRevision identifies the policy set that decided.
	// +optional
	PolicyRevision string `json:"policyRevision,omitempty"`
	// InputDigest identifies the input document that first produced this outcome (sha256 of
	// its canonical JSON, without "now" and without the gate's status).
	// +optional
	InputDigest string `json:"inputDigest,omitempty"`
	// EvaluatedAt is when the decision first had this outcome: it moves only when the
	// outcome (allowed, denials, policy revision) changes, not on every evaluation.
	// +optional
	EvaluatedAt *metav1.Time `json:"evaluatedAt,omitempty"`
	// LastApprovedInstallPlan is the last plan Tollgate approved for this Subscription.
	// +optional
	LastApprovedInstallPlan string `json:"lastApprovedInstallPlan,omitempty"`
}

// UpgradeGateStatus is written by Tollgate.
type UpgradeGateStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Package string `json:"package,omitempty"`
	// +optional
	InstalledCSV string `json:"installedCSV,omitempty"`
	// +optional
	CurrentCSV string `json:"currentCSV,omitempty"`
	// State is the Subscription's upgrade state as the policies see it: UpgradeAvailable,
	// UpgradePending, UpgradeFailed, AtLatestKnown or None.
	// +optional
	State string `json:"state,omitempty"`
	// +optional
	UpToDate bool `json:"upToDate,omitempty"`
	// +optional
	InstallPlanRef *corev1.ObjectReference `json:"installPlanRef,omitempty"`
	// +optional
	// +listType=atomic
	CatalogStatus []CatalogStatus `json:"catalogStatus,omitempty"`
	// Every list of the status is atomic: only Tollgate writes the status, and the API server
	// tracks an atomic list for less CPU per write than a list keyed by type, with managed
	// fields a quarter the size (BenchmarkGateStatusWrite, test/scale).

	// Conditions are the ten Subscription condition types plus UpgradeBlocked.
	// +optional
	// +listType=atomic
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Health is the worst-status aggregation of the operator's operands.
	// +optional
	// +listType=atomic
	Health []metav1.Condition `json:"health,omitempty"`
	// +optional
	Decision Decision `json:"decision,omitempty"`
	// Bypasses are the most recent InstallPlans of this Subscription approved without
	// Tollgate's approval record, newest first, each recorded once (at most MaxBypasses).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	Bypasses []Bypass `json:"bypasses,omitempty"`
}

// UpgradeGate holds or releases the upgrades of one OLM Subscription.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gate;gates,categories=tollgate
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.status.package`
// +kubebuilder:printcolumn:name="Installed",type=string,JSONPath=`.status.installedCSV`
// +kubebuilder:printcolumn:name="Current",type=string,JSONPath=`.status.currentCSV`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Allowed",type=boolean,JSONPath=`.status.decision.allowed`
// +kubebuilder:printcolumn:name="Blocked-By",type=string,JSONPath=`.status.decision.blockedBy`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type UpgradeGate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   UpgradeGateSpec   `json:"spec,omitempty"`
	Status UpgradeGateStatus `json:"status,omitempty"`
}

// UpgradeGateList is a list of UpgradeGates.
//
// +kubebuilder:object:root=true
type UpgradeGateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UpgradeGate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&UpgradeGate{}, &UpgradeGateList{})
}
