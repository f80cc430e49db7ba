package olmv1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// OLM v1's kinds, which this repository has no Go types for: the suite reads and writes them
// as unstructured objects.
var (
	clusterCatalogKind   = schema.GroupVersionKind{Group: "olm.operatorframework.io", Version: "v1", Kind: "ClusterCatalog"}
	clusterExtensionKind = schema.GroupVersionKind{Group: "olm.operatorframework.io", Version: "v1", Kind: "ClusterExtension"}
)

// metadataNameLabel is the label catalogd's webhook puts on every ClusterCatalog, holding its
// name: what a ClusterExtension's catalog selector matches.
const metadataNameLabel = "olm.operatorframework.io/metadata.name"

// newObject is an empty object of kind, named name, to read into.
func newObject(kind schema.GroupVersionKind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	u.SetName(name)
	return u
}

// clusterCatalog is a ClusterCatalog of the image ref, polled every minute.
func clusterCatalog(name, ref string) *unstructured.Unstructured {
	u := newObject(clusterCatalogKind, name)
	u.Object["spec"] = map[string]any{
		"source": map[string]any{
			"type":  "Image",
			"image": map[string]any{"ref": ref, "pollIntervalMinutes": int64(1)},
		},
	}
	return u
}

// extensionSpec is what a ClusterExtension asks for.
type extensionSpec struct {
	namespace      string // to install into
	serviceAccount string // in namespace, that operator-controller installs as
	pkg            string
	version        string // the pin: a version or a range; empty for none (every version)
	channels       []string
	catalog        string // the ClusterCatalog to take the package from
}

// clusterExtension is a ClusterExtension of s, with upgradeConstraintPolicy CatalogProvided:
// only the catalog's upgrade edges lead from the installed bundle to the next.
func clusterExtension(name string, s extensionSpec) *unstructured.Unstructured {
	channels := make([]any, 0, len(s.channels))
	for _, c := range s.channels {
		channels = append(channels, c)
	}
	u := newObject(clusterExtensionKind, name)
	u.Object["spec"] = map[string]any{
		"namespace":      s.namespace,
		"serviceAccount": map[string]any{"name": s.serviceAccount},
		"source": map[string]any{
			"sourceType": "Catalog",
			"catalog": map[string]any{
				"packageName":             s.pkg,
				"version":                 s.version,
				"channels":                channels,
				"selector":                map[string]any{"matchLabels": map[string]any{metadataNameLabel: s.catalog}},
				"upgradeConstraintPolicy": "CatalogProvided",
			},
		},
	}
	if s.version == "" { // an empty version is refused: the field is left out
		unstructured.RemoveNestedField(u.Object, "spec", "source", "catalog", "version")
	}
	return u
}

// setPin sets a ClusterExtension's spec.source.catalog.version.
func setPin(u *unstructured.Unstructured, version string) error {
	return unstructured.SetNestedField(u.Object, version, "spec", "source", "catalog", "version")
}

// condition is u's status condition of type, or nil.
func condition(u *unstructured.Unstructured, conditionType string) *metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	conditions := make([]metav1.Condition, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			conditions = append(conditions, c)
		}
	}
	return meta.FindStatusCondition(conditions, conditionType)
}

// conditionIs says whether u's condition of type has status and, unless reason is empty,
// reason, as of u's current generation.
func conditionIs(u *unstructured.Unstructured, conditionType string, status metav1.ConditionStatus, reason string) bool {
	c := condition(u, conditionType)
	return c != nil && c.Status == status && (reason == "" || c.Reason == reason) && c.ObservedGeneration == u.GetGeneration()
}

// nestedString is the string at path in u, or "".
func nestedString(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// installedVersion is the version of the bundle a ClusterExtension has installed, or "".
func installedVersion(u *unstructured.Unstructured) string {
	return nestedString(u, "status", "install", "bundle", "version")
}

// describe is u as YAML, without managed fields, for a failure message.
func describe(u *unstructured.Unstructured) string {
	u = u.DeepCopy()
	u.SetManagedFields(nil)
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Sprintf("%v (%v)", u.Object, err)
	}
	return "\n" + strings.TrimRight(string(out), "\n")
}
