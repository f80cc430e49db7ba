// Package v1 holds the operators.coreos.com/v1 kinds Tollgate reads: OperatorGroup and
// OperatorCondition. JSON names are identical to the upstream OLM CRDs.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these kinds.
	GroupVersion = schema.GroupVersion{Group: "operators.coreos.com", Version: "v1"}

	// SchemeBuilder registers these kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds these kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
