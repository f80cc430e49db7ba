// Package v1 holds packages.operators.coreos.com/v1 PackageManifest, served by OLM's
// package server (an aggregated API, not a CRD). Tollgate reads a channel's head from it.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=packages.operators.coreos.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of PackageManifest.
	GroupVersion = schema.GroupVersion{Group: "packages.operators.coreos.com", Version: "v1"}

	// SchemeBuilder registers PackageManifest with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds PackageManifest to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
