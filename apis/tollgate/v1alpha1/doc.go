// Package v1alpha1 holds the tollgate.dev/v1alpha1 UpgradeGate kind: one per OLM
// Subscription, carrying the admin's mode and overrides (spec) and Tollgate's view and
// decision (status).
//
// +kubebuilder:object:generate=true
// +groupName=tollgate.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of UpgradeGate.
	GroupVersion = schema.GroupVersion{Group: "tollgate.dev", Version: "v1alpha1"}

	// SchemeBuilder registers UpgradeGate with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds UpgradeGate to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
