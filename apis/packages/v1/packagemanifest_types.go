package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AppLink is a named link (a provider, a documentation page).
type AppLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Deprecation says that a package, channel or bundle is deprecated, and why.
type Deprecation struct {
	Message string `json:"message"`
}

// InstallMode says whether a CSV supports one kind of OperatorGroup.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// CSVDescription is what the package server says of a channel's head CSV: everything the
// package server serves but the icon, the links, the maintainers and the long description,
// which no decision reads and which weigh the most.
type CSVDescription struct {
	DisplayName string  `json:"displayName,omitempty"`
	Version     string  `json:"version,omitempty"`
	Provider    AppLink `json:"provider,omitempty"`
	// Annotations are the CSV's, createdAt among them (when the bundle was published).
	Annotations    map[string]string `json:"annotations,omitempty"`
	Keywords       []string          `json:"keywords,omitempty"`
	Maturity       string            `json:"maturity,omitempty"`
	InstallModes   []InstallMode     `json:"installModes,omitempty"`
	MinKubeVersion string            `json:"minKubeVersion,omitempty"`
	RelatedImages  []string          `json:"relatedImages,omitempty"`
}

// ChannelEntry is one bundle of a channel.
type ChannelEntry struct {
	Name        string       `json:"name"`
	Version     string       `json:"version,omitempty"`
	Deprecation *Deprecation `json:"deprecation,omitempty"`
}

// PackageChannel is one channel of a package: its head and its entries.
type PackageChannel struct {
	Name           string         `json:"name"`
	CurrentCSV     string         `json:"currentCSV"`
	CurrentCSVDesc CSVDescription `json:"currentCSVDesc,omitempty"`
	Deprecation    *Deprecation   `json:"deprecation,omitempty"`
	Entries        []ChannelEntry `json:"entries,omitempty"`
}

// PackageManifestSpec is empty: the package server writes only the status.
type PackageManifestSpec struct{}

// PackageManifestStatus is the package as one catalog serves it.
type PackageManifestStatus struct {
	CatalogSource            string           `json:"catalogSource"`
	CatalogSourceDisplayName string           `json:"catalogSourceDisplayName,omitempty"`
	CatalogSourcePublisher   string           `json:"catalogSourcePublisher,omitempty"`
	CatalogSourceNamespace   string           `json:"catalogSourceNamespace"`
	Provider                 AppLink          `json:"provider,omitempty"`
	PackageName              string           `json:"packageName"`
	Deprecation              *Deprecation     `json:"deprecation,omitempty"`
	Channels                 []PackageChannel `json:"channels"`
	DefaultChannel           string           `json:"defaultChannel"`
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
