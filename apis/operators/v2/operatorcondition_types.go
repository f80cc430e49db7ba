package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
)

// OperatorConditionSpec carries the operator's own conditions and admin overrides.
type OperatorConditionSpec struct {
	ServiceAccounts []string                        `json:"serviceAccounts,omitempty"`
	Deployments     []string                        `json:"deployments,omitempty"`
	Overrides       []operatorsv1.ConditionOverride `json:"overrides,omitempty"`
	Conditions      []metav1.Condition              `json:"conditions,omitempty"`
}

// OperatorConditionStatus holds the conditions OLM copies from spec.
type OperatorConditionStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorCondition is the channel through which an operator tells OLM it can be upgraded.
// It is named after the CSV it belongs to.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
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
