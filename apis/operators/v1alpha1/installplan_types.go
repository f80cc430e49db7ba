package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InstallPlanPhase is where an InstallPlan is in its life.
type InstallPlanPhase string

// The phases of an InstallPlan.
const (
	InstallPlanPhaseNone             InstallPlanPhase = ""
	InstallPlanPhasePlanning         InstallPlanPhase = "Planning"
	InstallPlanPhaseRequiresApproval InstallPlanPhase = "RequiresApproval"
	InstallPlanPhaseInstalling       InstallPlanPhase = "Installing"
	InstallPlanPhaseComplete         InstallPlanPhase = "Complete"
	InstallPlanPhaseFailed           InstallPlanPhase = "Failed"
)

// InstallPlanSpec lists the CSVs a plan installs and whether it is approved.
type InstallPlanSpec struct {
	CatalogSource              string   `json:"source,omitempty"`
	CatalogSourceNamespace     string   `json:"sourceNamespace,omitempty"`
	ClusterServiceVersionNames []string `json:"clusterServiceVersionNames"`
	Approval                   Approval `json:"approval"`
	Approved                   bool     `json:"approved"`
	Generation                 int      `json:"generation,omitempty"`
}

// InstallPlanCondition is a condition OLM reports on an InstallPlan.
type InstallPlanCondition struct {
	Type               string                 `json:"type,omitempty"`
	Status             corev1.ConditionStatus `json:"status,omitempty"`
	LastUpdateTime     *metav1.Time           `json:"lastUpdateTime,omitempty"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
}

// InstallPlanStatus is written by OLM.
type InstallPlanStatus struct {
	Phase          InstallPlanPhase       `json:"phase"`
	Conditions     []InstallPlanCondition `json:"conditions,omitempty"`
	CatalogSources []string               `json:"catalogSources"`
	Message        string                 `json:"message,omitempty"`
	StartTime      *metav1.Time           `json:"startTime,omitempty"`
}

// InstallPlan is OLM's plan to install or upgrade one or more CSVs.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ip,categories=olm
// +kubebuilder:printcolumn:name="CSV",type=string,JSONPath=`.spec.clusterServiceVersionNames[0]`
// +kubebuilder:printcolumn:name="Approval",type=string,JSONPath=`.spec.approval`
// +kubebuilder:printcolumn:name="Approved",type=boolean,JSONPath=`.spec.approved`
type InstallPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   InstallPlanSpec    `json:"spec"`
	Status *InstallPlanStatus `json:"status,omitempty"`
}

// InstallPlanList is a list of InstallPlans.
//
// +kubebuilder:object:root=true
type InstallPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InstallPlan `json:"items"`
}

func init() {
	SchemeBuilder.Register(&InstallPlan{}, &InstallPlanList{})
}
