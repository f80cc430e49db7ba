package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterServiceVersionPhase is where a CSV is in its life.
type ClusterServiceVersionPhase string

// The phases of a CSV.
const (
	CSVPhaseNone       ClusterServiceVersionPhase = ""
	CSVPhasePending    ClusterServiceVersionPhase = "Pending"
	CSVPhaseInstalling ClusterServiceVersionPhase = "Installing"
	CSVPhaseSucceeded  ClusterServiceVersionPhase = "Succeeded"
	CSVPhaseFailed     ClusterServiceVersionPhase = "Failed"
	CSVPhaseReplacing  ClusterServiceVersionPhase = "Replacing"
	CSVPhaseDeleting   ClusterServiceVersionPhase = "Deleting"
)

// CopiedFromLabel marks the copies of a CSV OLM writes into each target namespace of an
// operator's OperatorGroup; its value is the namespace of the original.
const CopiedFromLabel = "olm.copiedFrom"

// CRDDescription names one CRD a CSV owns or requires.
type CRDDescription struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
}

// CustomResourceDefinitions are the CRDs a CSV owns and requires.
type CustomResourceDefinitions struct {
	Owned    []CRDDescription `json:"owned,omitempty"`
	Required []CRDDescription `json:"required,omitempty"`
}

// NamedInstallStrategy is how OLM installs the operator; Tollgate keeps it opaque.
type NamedInstallStrategy struct {
	StrategyName string `json:"strategy"`
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	StrategySpec *apiextensionsv1.JSON `json:"spec,omitempty"`
}

// InstallMode says whether a CSV supports one kind of OperatorGroup.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// ClusterServiceVersionSpec is the part of a CSV Tollgate reads.
type ClusterServiceVersionSpec struct {
	DisplayName               string                    `json:"displayName"`
	Description               string                    `json:"description,omitempty"`
	Version                   string                    `json:"version,omitempty"`
	Replaces                  string                    `json:"replaces,omitempty"`
	Skips                     []string                  `json:"skips,omitempty"`
	InstallStrategy           NamedInstallStrategy      `json:"install"`
	InstallModes              []InstallMode             `json:"installModes,omitempty"`
	CustomResourceDefinitions CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`
}

// ClusterServiceVersionCondition is one entry of a CSV's phase history.
type ClusterServiceVersionCondition struct {
	Phase              ClusterServiceVersionPhase `json:"phase,omitempty"`
	Message            string                     `json:"message,omitempty"`
	Reason             string                     `json:"reason,omitempty"`
	LastUpdateTime     *metav1.Time               `json:"lastUpdateTime,omitempty"`
	LastTransitionTime *metav1.Time               `json:"lastTransitionTime,omitempty"`
}

// ClusterServiceVersionStatus is written by OLM.
type ClusterServiceVersionStatus struct {
	Phase              ClusterServiceVersionPhase       `json:"phase,omitempty"`
	Message            string                           `json:"message,omitempty"`
	Reason             string                           `json:"reason,omitempty"`
	LastUpdateTime     *metav1.Time                     `json:"lastUpdateTime,omitempty"`
	LastTransitionTime *metav1.Time                     `json:"lastTransitionTime,omitempty"`
	Conditions         []ClusterServiceVersionCondition `json:"conditions,omitempty"`
}

// ClusterServiceVersionKind is the kind of a ClusterServiceVersion, as InstallPlan steps name it.
const ClusterServiceVersionKind = "ClusterServiceVersion"

// ClusterServiceVersion describes one version of an operator.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=csv;csvs,categories=olm
// +kubebuilder:printcolumn:name="Display",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Replaces",type=string,JSONPath=`.spec.replaces`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
type ClusterServiceVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   ClusterServiceVersionSpec   `json:"spec"`
	Status ClusterServiceVersionStatus `json:"status,omitempty"`
}

// ClusterServiceVersionList is a list of CSVs.
//
// +kubebuilder:object:root=true
type ClusterServiceVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterServiceVersion `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterServiceVersion{}, &ClusterServiceVersionList{})
}
