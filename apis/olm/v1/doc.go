// Package v1 holds the olm.operatorframework.io/v1 kinds of OLM v1 that Tollgate reads and
// whose version pin it moves: ClusterExtension (operator-controller) and ClusterCatalog
// (catalogd). JSON names are identical to operator-controller v1.2.0's CRDs; v1.11.0 serves the
// same fields, with spec.serviceAccount optional and ignored.
//
// +kubebuilder:object:generate=true
// +groupName=olm.operatorframework.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these kinds.
	GroupVersion = schema.GroupVersion{Group: "olm.operatorframework.io", Version: "v1"}

	// SchemeBuilder registers these kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds these kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Condition types and reasons both kinds report.
const (
	TypeInstalled   = "Installed"
	TypeProgressing = "Progressing"
	TypeServing     = "Serving"

	TypeDeprecated        = "Deprecated"
	TypePackageDeprecated = "PackageDeprecated"
	TypeChannelDeprecated = "ChannelDeprecated"
	TypeBundleDeprecated  = "BundleDeprecated"

	ReasonSucceeded = "Succeeded"
	ReasonRetrying  = "Retrying"
	ReasonBlocked   = "Blocked"
	ReasonFailed    = "Failed"
	ReasonAvailable = "Available"
)
