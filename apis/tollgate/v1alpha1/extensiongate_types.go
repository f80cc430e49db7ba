package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionDeniedBundleAdmitted is True while the ClusterExtension's pin admits a bundle the
// policies denied that no exact pin can exclude: a bundle of the installed version OLM v1 could
// install (another build, a same-version bundle of a catalog it ranks first) while no successor
// is allowed. Its message names each bundle and what an admin can do; it is never reported as
// held.
const ConditionDeniedBundleAdmitted = "DeniedBundleAdmitted"

// ExtensionGateSpec is edited by admins; Tollgate never overwrites it.
type ExtensionGateSpec struct {
	// Mode is Enforce (move the ClusterExtension's version pin to the highest allowed successor)
	// or Audit (decide and report, never write the ClusterExtension). Empty means the manager's
	// --default-mode.
	// +optional
	Mode Mode `json:"mode,omitempty"`
	// Version is the range of versions the extension may be moved to, in the syntax of a
	// ClusterExtension's spec.source.catalog.version (e.g. ">=1.0.0 <2.0.0"). Empty: any
	// successor the catalog publishes.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`
	// Channels are the channels whose upgrade edges the extension may follow. Empty: the
	// ClusterExtension's own spec.source.catalog.channels, and with none there, every channel.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	Channels []string `json:"channels,omitempty"`
	// Overrides waive denial codes for this ClusterExtension.
	// +optional
	// +listType=map
	// +listMapKey=code
	// +kubebuilder:validation:MaxItems=32
	Overrides []Override `json:"overrides,omitempty"`
}

// Candidate is one successor of the installed bundle and the decision on it.
type Candidate struct {
	// Bundle is the bundle's name, as the catalog gives it.
	Bundle string `json:"bundle"`
	// Version is the bundle's version.
	Version string `json:"version"`
	// Catalog is the ClusterCatalog that serves it.
	Catalog string `json:"catalog"`
	// Allowed is true when the policies allow moving the pin to it.
	Allowed bool `json:"allowed"`
	// BlockedBy is the code of its first standing denial.
	// +optional
	BlockedBy string `json:"blockedBy,omitempty"`
}

// ExtensionGateStatus is written by Tollgate.
type ExtensionGateStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Package is the ClusterExtension's package.
	// +optional
	Package string `json:"package,omitempty"`
	// Installed is the version OLM v1 reports installed (status.install.bundle.version).
	// +optional
	Installed string `json:"installed,omitempty"`
	// Pin is the exact version Tollgate last set in, or accepted from, the ClusterExtension's
	// spec.source.catalog.version: the record of ownership, in the status subresource only
	// Tollgate writes. A pin that differs from it was set by someone else, and is taken back
	// whatever the ClusterExtension's annotations say.
	// +optional
	Pin string `json:"pin,omitempty"`
	// Catalogs are the content digests the candidates were read from, one per ClusterCatalog.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Catalogs []string `json:"catalogs,omitempty"`
	// Candidates are the successors OLM v1 would take from the installed version within the
	// gate's range and channels, highest first, each with its decision.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Candidates []Candidate `json:"candidates,omitempty"`
	// Every list of the status is atomic: only Tollgate writes the status, and the API server
	// tracks an atomic list for less CPU per write than a list keyed by type, with managed
	// fields a quarter the size (BenchmarkGateStatusWrite, test/scale).

	// Conditions are the policies' conditions, UpgradeBlocked among them, and PinOwned.
	// +optional
	// +listType=atomic
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Health is the worst-status aggregation of the operands: instances of the kinds the
	// installed bundle provides.
	// +optional
	// +listType=atomic
	Health []metav1.Condition `json:"health,omitempty"`
	// Decision is the decision on the highest candidate: why the pin is not higher.
	// +optional
	Decision Decision `json:"decision,omitempty"`
	// Bypasses are the most recent moves of the ClusterExtension's pin away from the one
	// Tollgate owned, newest first, each recorded once (at most MaxBypasses).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	Bypasses []Bypass `json:"bypasses,omitempty"`
}

// ExtensionGate gates the upgrades of the OLM v1 ClusterExtension of the same name: Tollgate
// owns its spec.source.catalog.version, keeps it an exact version, and moves it to a successor
// only when the policies allow it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=xgate;xgates,categories=tollgate
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.status.package`
// +kubebuilder:printcolumn:name="Installed",type=string,JSONPath=`.status.installed`
// +kubebuilder:printcolumn:name="Pin",type=string,JSONPath=`.status.pin`
// +kubebuilder:printcolumn:name="Allowed",type=boolean,JSONPath=`.status.decision.allowed`
// +kubebuilder:printcolumn:name="Blocked-By",type=string,JSONPath=`.status.decision.blockedBy`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ExtensionGate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExtensionGateSpec   `json:"spec,omitempty"`
	Status ExtensionGateStatus `json:"status,omitempty"`
}

// ExtensionGateList is a list of ExtensionGates.
//
// +kubebuilder:object:root=true
type ExtensionGateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtensionGate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ExtensionGate{}, &ExtensionGateList{})
}
