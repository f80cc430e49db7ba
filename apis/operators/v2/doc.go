// Package v2 holds operators.coreos.com/v2 OperatorCondition, the storage version, whose
// spec carries the conditions the operator reports. JSON names are identical to the
// upstream OLM CRD.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these kinds.
	GroupVersion = schema.GroupVersion{Group: "operators.coreos.com", Version: "v2"}

	// SchemeBuilder registers these kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds these kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
