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
	// Plan are the steps OLM resolved: one per object the plan creates or updates.
	Plan []*Step `json:"plan,omitempty"`
	// BundleLookups are the bundles OLM unpacks from images before it can write the steps.
	BundleLookups               []BundleLookup          `json:"bundleLookups,omitempty"`
	AttenuatedServiceAccountRef *corev1.ObjectReference `json:"attenuatedServiceAccountRef,omitempty"`
}

// Step is one object an InstallPlan creates or updates, on behalf of the CSV it resolves.
type Step struct {
	// Resolving is the name of the CSV the step belongs to.
	Resolving string       `json:"resolving"`
	Resource  StepResource `json:"resource"`
	Optional  bool         `json:"optional,omitempty"`
	Status    string       `json:"status"`
}

// StepResource names the object of a step; Manifest is the object itself, as JSON.
type StepResource struct {
	CatalogSource          string `json:"sourceName"`
	CatalogSourceNamespace string `json:"sourceNamespace"`
	Group                  string `json:"group"`
	Version                string `json:"version"`
	Kind                   string `json:"kind"`
	Name                   string `json:"name"`
	Manifest               string `json:"manifest,omitempty"`
}

// BundleLookup is a bundle OLM unpacks for the plan: Identifier is the CSV it holds and
// Replaces the CSV it replaces.
type BundleLookup struct {
	Path             string                  `json:"path"`
	Identifier       string                  `json:"identifier"`
	Replaces         string                  `json:"replaces"`
	CatalogSourceRef *corev1.ObjectReference `json:"catalogSourceRef"`
	Conditions       []BundleLookupCondition `json:"conditions,omitempty"`
	// Properties are the unpacked bundle's properties, as JSON.
	Properties string `json:"properties,omitempty"`
}

// BundleLookupCondition is a condition of a bundle lookup.
type BundleLookupCondition struct {
	Type               string                 `json:"type"`
	Status             corev1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
	LastUpdateTime     *metav1.Time           `json:"lastUpdateTime,omitempty"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
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
