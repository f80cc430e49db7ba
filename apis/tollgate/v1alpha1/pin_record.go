package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PinRecordAnnotation is the annotation Tollgate writes on a ClusterExtension in the very write
// that sets its spec.source.catalog.version: its value (a PinRecord as JSON) is the decision
// behind the pin, for audit. Anyone who may edit the ClusterExtension may edit it too, so it
// proves nothing: the pin Tollgate owns is the ExtensionGate's status.pin.
const PinRecordAnnotation = "tollgate.dev/pin"

// ConditionPinOwned is True while the ClusterExtension's version is the pin Tollgate set or
// accepted; False says who else changed it, or why Tollgate does not own it.
const ConditionPinOwned = "PinOwned"

// PinRecord is the decision behind a pin.
//
// +kubebuilder:object:generate=false
type PinRecord struct {
	// Version is the pin set.
	Version string `json:"version"`
	// Installed is the version installed when it was set; a pin equal to it moves nothing.
	Installed string `json:"installed"`
	// PolicyRevision and InputDigest are the decision's on Version (empty for a pin at the
	// installed version, which no decision moves).
	PolicyRevision string `json:"policyRevision,omitempty"`
	InputDigest    string `json:"inputDigest,omitempty"`
	// TookBackFrom is the version someone else had set (empty: none, every version), when this
	// pin took it back.
	TookBackFrom *string `json:"tookBackFrom,omitempty"`
	// PinnedAt is when Tollgate set it.
	PinnedAt metav1.Time `json:"pinnedAt"`
}

// String is the record as the annotation holds it.
func (r PinRecord) String() string {
	b, _ := json.Marshal(r) // strings and a time: cannot fail
	return string(b)
}

// ParsePinRecord reads a PinRecordAnnotation; ok is false when s is not one.
func ParsePinRecord(s string) (r PinRecord, ok bool) {
	return r, json.Unmarshal([]byte(s), &r) == nil && r.Version != ""
}
