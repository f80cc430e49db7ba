package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpgradeConstraintPolicy says whether OLM v1 follows the catalog's upgrade edges
// (CatalogProvided) or installs any version in range (SelfCertified).
type UpgradeConstraintPolicy string

// The upgrade constraint policies.
const (
	UpgradeConstraintPolicyCatalogProvided UpgradeConstraintPolicy = "CatalogProvided"
	UpgradeConstraintPolicySelfCertified   UpgradeConstraintPolicy = "SelfCertified"
)

// ClusterExtensionGroupKind is the group and kind of a ClusterExtension.
var ClusterExtensionGroupKind = GroupVersion.WithKind("ClusterExtension").GroupKind()

// SourceTypeCatalog is the one source type of a ClusterExtension.
const SourceTypeCatalog = "Catalog"

// ClusterExtension is an operator installed by OLM v1 from a catalog.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type ClusterExtension struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterExtensionSpec   `json:"spec,omitempty"`
	Status ClusterExtensionStatus `json:"status,omitempty"`
}

// ClusterExtensionSpec is what to install, where, and as whom.
type ClusterExtensionSpec struct {
	Namespace string `json:"namespace"`
	// ServiceAccount is required by v1.2.0 (installs run as it) and ignored by v1.11.0.
	ServiceAccount *ServiceAccountReference       `json:"serviceAccount,omitempty"`
	Source         SourceConfig                   `json:"source"`
	Install        *ClusterExtensionInstallConfig `json:"install,omitempty"`
}

// SourceConfig is where the extension's bundles come from.
type SourceConfig struct {
	SourceType string         `json:"sourceType"`
	Catalog    *CatalogFilter `json:"catalog,omitempty"`
}

// CatalogFilter selects the package, and the bundles of it OLM v1 may install. Version is the
// pin Tollgate owns for a gated extension.
type CatalogFilter struct {
	PackageName             string                  `json:"packageName"`
	Version                 string                  `json:"version,omitempty"`
	Channels                []string                `json:"channels,omitempty"`
	Selector                *metav1.LabelSelector   `json:"selector,omitempty"`
	UpgradeConstraintPolicy UpgradeConstraintPolicy `json:"upgradeConstraintPolicy,omitempty"`
}

// ServiceAccountReference names a ServiceAccount of the install namespace.
type ServiceAccountReference struct {
	Name string `json:"name"`
}

// ClusterExtensionInstallConfig tunes the install.
type ClusterExtensionInstallConfig struct {
	Preflight *PreflightConfig `json:"preflight,omitempty"`
}

// PreflightConfig are the checks before an install or upgrade.
type PreflightConfig struct {
	CRDUpgradeSafety *CRDUpgradeSafetyPreflightConfig `json:"crdUpgradeSafety"`
}

// CRDUpgradeSafetyPreflightConfig says whether CRD upgrades are checked (Strict) or not (None).
type CRDUpgradeSafetyPreflightConfig struct {
	Enforcement string `json:"enforcement"`
}

// ClusterExtensionStatus is what OLM v1 installed and how it went.
type ClusterExtensionStatus struct {
	Conditions []metav1.Condition             `json:"conditions,omitempty"`
	Install    *ClusterExtensionInstallStatus `json:"install,omitempty"`
}

// ClusterExtensionInstallStatus is the bundle installed.
type ClusterExtensionInstallStatus struct {
	Bundle BundleMetadata `json:"bundle"`
}

// BundleMetadata names a bundle and its version.
type BundleMetadata struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ClusterExtensionList is a list of ClusterExtensions.
//
// +kubebuilder:object:root=true
type ClusterExtensionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterExtension `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterExtension{}, &ClusterExtensionList{})
}
