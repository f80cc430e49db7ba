package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Kinds of object a bypass changes.
const (
	// BypassKindInstallPlan: a Manual InstallPlan approved without Tollgate's approval record,
	// or run (status.phase Installing or Complete) without being approved.
	BypassKindInstallPlan = "InstallPlan"
	// BypassKindClusterExtension: a ClusterExtension's version pin moved away from the one its
	// ExtensionGate's status.pin records as Tollgate's.
	BypassKindClusterExtension = "ClusterExtension"
)

// Fields a bypass changes.
const (
	// BypassFieldApproved is an InstallPlan's spec.approved.
	BypassFieldApproved = "spec.approved"
	// BypassFieldPhase is an InstallPlan's status.phase, moved to Installing (OLM runs the
	// plan) while spec.approved is false: only a hand write of the status does that.
	BypassFieldPhase = "status.phase"
	// BypassFieldVersion is a ClusterExtension's spec.source.catalog.version.
	BypassFieldVersion = "spec.source.catalog.version" //nolint:gosec // G101 reads "pass" in Bypass: no credential
)

// MaxBypasses is how many bypasses a gate's status keeps: the most recent ones.
const MaxBypasses = 5

// UnknownFieldManager is a bypass's By when the object does not say who set the field.
const UnknownFieldManager = "unknown"

// Bypass is a change that only Tollgate is meant to make, made by someone else: a Manual
// InstallPlan approved without Tollgate's approval record (tollgate.dev/approval), or a
// ClusterExtension pin moved away from the one Tollgate owned. A gate records each once,
// recognised by the object's UID, the field and the value it was set to.
type Bypass struct {
	// Kind is the kind of the object changed: InstallPlan or ClusterExtension.
	// +kubebuilder:validation:Enum=InstallPlan;ClusterExtension
	Kind string `json:"kind"`
	// Name is the object's name; an InstallPlan is in the gate's namespace.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// UID is the object's UID: a plan or extension of the same name created again is another.
	UID types.UID `json:"uid"`
	// Field is the field changed: spec.approved or status.phase (a plan), or
	// spec.source.catalog.version (a pin).
	// +kubebuilder:validation:MaxLength=64
	Field string `json:"field"`
	// From is the value Tollgate owned before (a pin); empty when not known (a plan).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	From string `json:"from,omitempty"`
	// To is the value set: "true" (spec.approved) or the phase (status.phase) for a plan, the
	// version set for a pin.
	// +kubebuilder:validation:MaxLength=256
	To string `json:"to"`
	// By is the field manager that last set the field, as the object's metadata.managedFields
	// say (kubectl, kubectl-patch, a controller's name...), or "unknown". It names a client,
	// not a person: the API server's audit log names the user.
	// +kubebuilder:validation:MaxLength=128
	By string `json:"by"`
	// At is when that field manager last wrote the object (its managedFields entry's time);
	// absent when not known.
	// +optional
	At *metav1.Time `json:"at,omitempty"`
	// SeenAt is when Tollgate saw the change.
	SeenAt metav1.Time `json:"seenAt"`
	// Decision is what the gate's policies said at that moment.
	Decision BypassDecision `json:"decision"`
}

// BypassDecision is what a gate's policies said about a change when it was made behind them.
type BypassDecision struct {
	// Allowed is true when the gate's recorded decision allowed the change.
	Allowed bool `json:"allowed"`
	// Codes are the standing denial codes of that decision, when it did not allow it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Codes []string `json:"codes,omitempty"`
	// PolicyRevision is the policy set that decided.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	PolicyRevision string `json:"policyRevision,omitempty"`
	// InputDigest identifies the input document decided on, as status.decision.inputDigest.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	InputDigest string `json:"inputDigest,omitempty"`
}
