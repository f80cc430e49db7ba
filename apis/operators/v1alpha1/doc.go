// Package v1alpha1 holds the operators.coreos.com/v1alpha1 kinds Tollgate reads:
// Subscription, ClusterServiceVersion, InstallPlan and CatalogSource.
//
// They are copies of the upstream OLM types, reduced to the fields Tollgate uses,
// with JSON names identical to the upstream CRDs (a test proves it). CatalogSource also
// carries the structured sources (catalogImageSource, catalogServiceSource,
// configMapSource) beside the legacy sourceType fields.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these kinds.
	GroupVersion = schema.GroupVersion{Group: "operators.coreos.com", Version: "v1alpha1"}

	// SchemeBuilder registers these kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds these kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
