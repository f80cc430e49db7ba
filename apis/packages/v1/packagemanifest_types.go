package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PackageChannel is one channel of a package and its head CSV.
type PackageChannel struct {
	Name       string `json:"name"`
	CurrentCSV string `json:"currentCSV"`
}

// PackageManifestSpec is empty: OLM's package server serves `spec: {}` and keeps everything
// in status.
type PackageManifestSpec struct{}

// PackageManifestStatus is what a catalog knows of a package.
type PackageManifestStatus struct {
	CatalogSource          string           `json:"catalogSource"`
	CatalogSourceNamespace string           `json:"catalogSourceNamespace"`
	PackageName            string           `json:"packageName"`
	Channels               []PackageChannel `json:"channels"`
	DefaultChannel         string           `json:"defaultChannel"`
}

// PackageManifest is a package as a catalog serves it.
//
// +kubebuilder:object:root=true
type PackageManifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PackageManifestSpec   `json:"spec,omitempty"`
	Status PackageManifestStatus `json:"status,omitempty"`
}

// PackageManifestList is a list of PackageManifests.
//
// +kubebuilder:object:root=true
type PackageManifestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PackageManifest `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PackageManifest{}, &PackageManifestList{})
}
