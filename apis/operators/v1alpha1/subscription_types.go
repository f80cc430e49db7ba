package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Approval is the approval mode of InstallPlans created for a Subscription.
type Approval string

const (
	// ApprovalAutomatic lets OLM approve plans itself.
	ApprovalAutomatic Approval = "Automatic"
	// ApprovalManual leaves plans waiting for someone (Tollgate) to approve them.
	ApprovalManual Approval = "Manual"
)

// SubscriptionState is OLM's summary of where a Subscription stands.
type SubscriptionState string

// The states OLM writes into status.state.
const (
	SubscriptionStateNone             SubscriptionState = ""
	SubscriptionStateFailed           SubscriptionState = "UpgradeFailed"
	SubscriptionStateUpgradeAvailable SubscriptionState = "UpgradeAvailable"
	SubscriptionStateUpgradePending   SubscriptionState = "UpgradePending"
	SubscriptionStateAtLatest         SubscriptionState = "AtLatestKnown"
)

// SubscriptionSpec says which package, channel and catalog to follow.
type SubscriptionSpec struct {
	CatalogSource          string   `json:"source"`
	CatalogSourceNamespace string   `json:"sourceNamespace"`
	Package                string   `json:"name"`
	Channel                string   `json:"channel,omitempty"`
	StartingCSV            string   `json:"startingCSV,omitempty"`
	InstallPlanApproval    Approval `json:"installPlanApproval,omitempty"`
}

// SubscriptionCatalogHealth is OLM's view of one catalog's health.
type SubscriptionCatalogHealth struct {
	CatalogSourceRef *corev1.ObjectReference `json:"catalogSourceRef"`
	LastUpdated      *metav1.Time            `json:"lastUpdated"`
	Healthy          bool                    `json:"healthy"`
}

// SubscriptionCondition is a condition OLM reports on a Subscription.
type SubscriptionCondition struct {
	Type               string                 `json:"type"`
	Status             corev1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
	LastHeartbeatTime  *metav1.Time           `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
}

// SubscriptionStatus is written by OLM; Tollgate only reads it.
type SubscriptionStatus struct {
	CurrentCSV            string                      `json:"currentCSV,omitempty"`
	InstalledCSV          string                      `json:"installedCSV,omitempty"`
	InstallPlanGeneration int                         `json:"installPlanGeneration,omitempty"`
	InstallPlanRef        *corev1.ObjectReference     `json:"installPlanRef,omitempty"`
	State                 SubscriptionState           `json:"state,omitempty"`
	Reason                string                      `json:"reason,omitempty"`
	CatalogHealth         []SubscriptionCatalogHealth `json:"catalogHealth,omitempty"`
	Conditions            []SubscriptionCondition     `json:"conditions,omitempty"`
	LastUpdated           metav1.Time                 `json:"lastUpdated"`
}

// SubscriptionKind is the kind of a Subscription, as InstallPlan steps name it.
const SubscriptionKind = "Subscription"

// SubscriptionGroupKind is the group and kind of a Subscription.
var SubscriptionGroupKind = GroupVersion.WithKind(SubscriptionKind).GroupKind()

// Subscription keeps an operator installed and up to date from a catalog channel.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sub;subs,categories=olm
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=`.spec.channel`
type Subscription struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec *SubscriptionSpec `json:"spec"`
	// +optional
	Status SubscriptionStatus `json:"status"`
}

// SubscriptionList is a list of Subscriptions.
//
// +kubebuilder:object:root=true
type SubscriptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Subscription `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Subscription{}, &SubscriptionList{})
}
