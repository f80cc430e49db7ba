package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetadataNameLabel is the label catalogd's webhook sets on a ClusterCatalog to its name, for
// ClusterExtensions' catalog selectors.
const MetadataNameLabel = "olm.operatorframework.io/metadata.name"

// Availability modes: an Unavailable catalog takes no part in resolution.
const (
	AvailabilityModeAvailable   = "Available"
	AvailabilityModeUnavailable = "Unavailable"
)

// ClusterCatalog is a catalog image catalogd unpacks and serves over HTTPS.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type ClusterCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   ClusterCatalogSpec   `json:"spec"`
	Status ClusterCatalogStatus `json:"status,omitempty"`
}

// ClusterCatalogSpec is the catalog's source and its rank among catalogs.
type ClusterCatalogSpec struct {
	Source           CatalogSource `json:"source"`
	Priority         int32         `json:"priority"`
	AvailabilityMode string        `json:"availabilityMode,omitempty"`
}

// CatalogSource is the catalog image.
type CatalogSource struct {
	Type  string       `json:"type"`
	Image *ImageSource `json:"image,omitempty"`
}

// ImageSource is an image reference, polled for new content.
type ImageSource struct {
	Ref                 string `json:"ref"`
	PollIntervalMinutes *int   `json:"pollIntervalMinutes,omitempty"`
}

// ClusterCatalogStatus is the content served: which (resolvedSource, by digest), where
// (urls.base), and whether (Serving).
type ClusterCatalogStatus struct {
	Conditions     []metav1.Condition     `json:"conditions,omitempty"`
	ResolvedSource *ResolvedCatalogSource `json:"resolvedSource,omitempty"`
	URLs           *ClusterCatalogURLs    `json:"urls,omitempty"`
	LastUnpacked   *metav1.Time           `json:"lastUnpacked,omitempty"`
}

// ResolvedCatalogSource is the source as unpacked.
type ResolvedCatalogSource struct {
	Type  string               `json:"type"`
	Image *ResolvedImageSource `json:"image"`
}

// ResolvedImageSource is the image unpacked, by digest.
type ResolvedImageSource struct {
	Ref string `json:"ref"`
}

// ClusterCatalogURLs is where catalogd serves the content.
type ClusterCatalogURLs struct {
	Base string `json:"base"`
}

// ClusterCatalogList is a list of ClusterCatalogs.
//
// +kubebuilder:object:root=true
type ClusterCatalogList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ClusterCatalog `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterCatalog{}, &ClusterCatalogList{})
}
