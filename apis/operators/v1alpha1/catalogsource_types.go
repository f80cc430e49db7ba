package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SourceType is the legacy way of saying what backs a catalog.
type SourceType string

// The legacy source types.
const (
	SourceTypeGrpc      SourceType = "grpc"
	SourceTypeConfigmap SourceType = "configmap"
	SourceTypeInternal  SourceType = "internal"
)

// CatalogSourceSpec says where a catalog's content comes from: exactly one of the
// structured sources, or a legacy sourceType with its matching field.
//
// +kubebuilder:validation:XValidation:rule="(has(self.catalogImageSource) ? 1 : 0) + (has(self.catalogServiceSource) ? 1 : 0) + (has(self.configMapSource) ? 1 : 0) + (has(self.sourceType) ? 1 : 0) == 1",message="set exactly one of catalogImageSource, catalogServiceSource, configMapSource, or the legacy sourceType"
// +kubebuilder:validation:XValidation:rule="!has(self.sourceType) || (self.sourceType == 'grpc' && (has(self.image) || has(self.address))) || (self.sourceType != 'grpc' && has(self.configMap))",message="legacy sourceType grpc needs image or address; configmap and internal need configMap"
// +kubebuilder:validation:XValidation:rule="has(self.sourceType) || !(has(self.image) || has(self.address) || has(self.configMap) || has(self.grpcPodConfig))",message="image, address, configMap and grpcPodConfig belong to the legacy sourceType; use the structured source's own fields"
type CatalogSourceSpec struct {
	// Legacy fields.

	// +kubebuilder:validation:Enum=grpc;configmap;internal
	// +optional
	SourceType SourceType `json:"sourceType,omitempty"`
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
	// +optional
	Address string `json:"address,omitempty"`
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	GrpcPodConfig *GrpcPodConfig `json:"grpcPodConfig,omitempty"`

	// Structured sources.

	// +optional
	CatalogImageSource *CatalogImageSource `json:"catalogImageSource,omitempty"`
	// +optional
	CatalogServiceSource *CatalogServiceSource `json:"catalogServiceSource,omitempty"`
	// +optional
	ConfigMapSource *ConfigMapSource `json:"configMapSource,omitempty"`

	// Fields common to every source.

	// +optional
	Priority int `json:"priority,omitempty"`
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`
	// +optional
	Secrets []string `json:"secrets,omitempty"`
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Publisher string `json:"publisher,omitempty"`
}

// GrpcPodConfig is the legacy registry pod configuration.
type GrpcPodConfig struct {
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
}

// CatalogImageSource is a catalog served from an operator-registry image.
type CatalogImageSource struct {
	// CatalogImage is an operator-registry container image.
	CatalogImage string `json:"catalogImage,omitempty"`
	// PodSpecOverrides are optional registry pod spec overrides.
	// +optional
	PodSpecOverrides *CatalogImageSourcePodSpecOverrides `json:"podSpecOverrides,omitempty"`
}

// CatalogImageSourcePodSpecOverrides replaces GrpcPodConfig for image sources.
type CatalogImageSourcePodSpecOverrides struct {
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// CatalogServiceSource is a catalog served by an existing registry service.
type CatalogServiceSource struct {
	// Address is <registry-host or ip>:<port>.
	Address string `json:"address,omitempty"`
}

// ConfigMapSource is a catalog backed by a ConfigMap.
type ConfigMapSource struct {
	// ConfigMap names the ConfigMap that backs a configmap-server registry.
	ConfigMap string `json:"configMap,omitempty"`
}

// UpdateStrategy says how often OLM polls the catalog image.
type UpdateStrategy struct {
	// +optional
	RegistryPoll *RegistryPoll `json:"registryPoll,omitempty"`
}

// RegistryPoll is the polling interval of a catalog image.
type RegistryPoll struct {
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// GRPCConnectionState is OLM's last view of the catalog's registry connection.
type GRPCConnectionState struct {
	Address           string      `json:"address,omitempty"`
	LastObservedState string      `json:"lastObservedState"`
	LastConnectTime   metav1.Time `json:"lastConnect,omitempty"`
}

// RegistryServiceStatus names the service that serves a catalog.
type RegistryServiceStatus struct {
	Protocol         string      `json:"protocol,omitempty"`
	ServiceName      string      `json:"serviceName,omitempty"`
	ServiceNamespace string      `json:"serviceNamespace,omitempty"`
	Port             string      `json:"port,omitempty"`
	CreatedAt        metav1.Time `json:"createdAt,omitempty"`
}

// CatalogSourceStatus is written by OLM.
type CatalogSourceStatus struct {
	Message                 string                 `json:"message,omitempty"`
	Reason                  string                 `json:"reason,omitempty"`
	RegistryServiceStatus   *RegistryServiceStatus `json:"registryService,omitempty"`
	GRPCConnectionState     *GRPCConnectionState   `json:"connectionState,omitempty"`
	LatestImageRegistryPoll *metav1.Time           `json:"latestImageRegistryPoll,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CatalogSource is a repository of operators OLM can install from.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=catsrc,categories=olm
// +kubebuilder:printcolumn:name="Display",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.sourceType`
// +kubebuilder:printcolumn:name="Publisher",type=string,JSONPath=`.spec.publisher`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CatalogSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec   CatalogSourceSpec   `json:"spec"`
	Status CatalogSourceStatus `json:"status,omitempty"`
}

// CatalogSourceList is a list of CatalogSources.
//
// +kubebuilder:object:root=true
type CatalogSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CatalogSource `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CatalogSource{}, &CatalogSourceList{})
}
