package v1alpha1

import (
	"cmp"
	"encoding/json"

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

// ReplacesOf is the CSV that csv replaces according to the plan: its bundle lookup's
// replaces, or else the spec.replaces of the CSV manifest of its step; "" when the plan does
// not say (or the manifest does not parse).
func (p *InstallPlan) ReplacesOf(csv string) string {
	if p.Status == nil || csv == "" {
		return ""
	}
	for _, b := range p.Status.BundleLookups {
		if b.Identifier == csv && b.Replaces != "" {
			return b.Replaces
		}
	}
	for _, s := range p.Status.Plan {
		if s == nil || s.Resolving != csv || s.Resource.Kind != ClusterServiceVersionKind || s.Resource.Name != csv {
			continue
		}
		var m struct {
			Spec struct {
				Replaces string `json:"replaces"`
			} `json:"spec"`
		}
		if json.Unmarshal([]byte(s.Resource.Manifest), &m) == nil && m.Spec.Replaces != "" {
			return m.Spec.Replaces
		}
	}
	return ""
}

// Dependency is a Subscription an InstallPlan creates for one of its CSVs: OLM resolves a
// package another bundle requires into the plan, with a step that creates its Subscription.
type Dependency struct {
	// Subscription is the name OLM gives the Subscription it creates.
	Subscription string
	// Package is the package it follows.
	Package string
}

// DependencyOf is the Subscription the plan creates for csv: a step of kind Subscription
// resolving csv whose manifest starts at csv. Nil when the plan creates none (or its manifest
// does not parse).
func (p *InstallPlan) DependencyOf(csv string) *Dependency {
	if p.Status == nil || csv == "" {
		return nil
	}
	for _, s := range p.Status.Plan {
		if s != nil && s.Resolving == csv {
			if d := s.Dependency(); d != nil {
				return d
			}
		}
	}
	return nil
}

// Dependency is the Subscription the step creates when it is a Subscription step starting at
// the CSV it resolves; nil otherwise.
func (s *Step) Dependency() *Dependency {
	if s.Resource.Kind != SubscriptionKind {
		return nil
	}
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Package     string `json:"name"`
			StartingCSV string `json:"startingCSV"`
		} `json:"spec"`
	}
	if json.Unmarshal([]byte(s.Resource.Manifest), &m) != nil || m.Spec.StartingCSV != s.Resolving || m.Spec.Package == "" {
		return nil
	}
	return &Dependency{Subscription: cmp.Or(m.Metadata.Name, s.Resource.Name), Package: m.Spec.Package}
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
