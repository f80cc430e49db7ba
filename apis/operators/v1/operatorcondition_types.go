package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types OLM reads from an OperatorCondition.
const (
	// Upgradeable False makes OLM (and Tollgate) hold upgrades of the operator.
	Upgradeable string = "Upgradeable"
)

// ConditionOverride is an admin's override of a condition the operator reports. Unlike
// metav1.Condition it needs no lastTransitionTime, as in the upstream CRD.
type ConditionOverride struct {
	Type   string                 `json:"type"`
	Status metav1.ConditionStatus `json:"status"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message"`
}

// OperatorConditionSpec lets an admin override the conditions an operator reports.
type OperatorConditionSpec struct {
	ServiceAccounts []string            `json:"serviceAccounts,omitempty"`
	Deployments     []string            `json:"deployments,omitempty"`
	Overrides       []ConditionOverride `json:"overrides,omitempty"`
}

// OperatorConditionStatus holds the conditions OLM copies from the operator.
type OperatorConditionStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorCondition is the channel through which an operator tells OLM it can be upgraded.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=condition,categories=olm
type OperatorCondition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OperatorConditionSpec   `json:"spec,omitempty"`
	Status OperatorConditionStatus `json:"status,omitempty"`
}

// OperatorConditionList is a list of OperatorConditions.
//
// +kubebuilder:object:root=true
type OperatorConditionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorCondition `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OperatorCondition{}, &OperatorConditionList{})
}
