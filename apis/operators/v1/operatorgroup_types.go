package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorGroupSpec selects the namespaces the group's operators watch.
type OperatorGroupSpec struct {
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	// +listType=set
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// +optional
	StaticProvidedAPIs bool `json:"staticProvidedAPIs,omitempty"`
	// UpgradeStrategy says how OLM moves CSVs of this group to the next version.
	// +kubebuilder:validation:Enum=Default;TechPreviewUnsafeFailForward
	// +kubebuilder:default=Default
	// +optional
	UpgradeStrategy string `json:"upgradeStrategy,omitempty"`
}

// OperatorGroupStatus is written by OLM.
type OperatorGroupStatus struct {
	// Namespaces the group targets; empty string means all namespaces.
	// +listType=set
	Namespaces        []string                `json:"namespaces,omitempty"`
	ServiceAccountRef *corev1.ObjectReference `json:"serviceAccountRef,omitempty"`
	LastUpdated       *metav1.Time            `json:"lastUpdated"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorGroup is the unit of multitenancy OLM installs operators into.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=og,categories=olm
type OperatorGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// +optional
	Spec   OperatorGroupSpec   `json:"spec"`
	Status OperatorGroupStatus `json:"status,omitempty"`
}

// OperatorGroupList is a list of OperatorGroups.
//
// +kubebuilder:object:root=true
type OperatorGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OperatorGroup{}, &OperatorGroupList{})
}
