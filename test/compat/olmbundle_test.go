package compat

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// bundleFile reads a file of the generated bundles/ tree.
func bundleFile(t *testing.T, path ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(repo.Path(append([]string{"bundles"}, path...)...))
	require.NoError(t, err, "run make manifests to generate the bundle and the catalog")
	return data
}

// release is the VERSION file: "v0.1.0".
func release(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(repo.Path("VERSION"))
	require.NoError(t, err)
	return strings.TrimSpace(string(data))
}

// servedCSV creates Tollgate's CSV on the API server that serves the upstream OLM CRDs and
// reads it back, so every field checked below survived the upstream schema's pruning.
func servedCSV(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(bundleFile(t, "olm", "manifests", "tollgate.clusterserviceversion.yaml"), &u.Object))
	u.SetNamespace(namespace(t, upstream))
	require.NoError(t, upstream.Client.Create(ctx, u))
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	require.NoError(t, upstream.Client.Get(ctx, client.ObjectKeyFromObject(u), got))
	return got
}

// Tollgate's own OLM bundle is accepted by the upstream ClusterServiceVersion schema and
// describes what config/ deploys.
func TestTollgatesOwnCSVIsAcceptedByTheUpstreamCRD(t *testing.T) {
	ctx := context.Background()
	u := servedCSV(t)
	csv := &v1alpha1.ClusterServiceVersion{}
	require.NoError(t, upstream.Client.Get(ctx, client.ObjectKeyFromObject(u), csv))
	assert.Equal(t, "deployment", csv.Spec.InstallStrategy.StrategyName)
	var owned []string
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		owned = append(owned, o.Name)
	}
	assert.ElementsMatch(t, []string{"upgradegates.tollgate.dev", "extensiongates.tollgate.dev"}, owned)
	// Tollgate gates Subscriptions in every namespace: AllNamespaces, and nothing narrower.
	assert.ElementsMatch(t, []v1alpha1.InstallMode{
		{Type: "OwnNamespace", Supported: false},
		{Type: "SingleNamespace", Supported: false},
		{Type: "MultiNamespace", Supported: false},
		{Type: "AllNamespaces", Supported: true},
	}, csv.Spec.InstallModes)
	var spec struct {
		Deployments []struct {
			Name string                `json:"name"`
			Spec appsv1.DeploymentSpec `json:"spec"`
		} `json:"deployments"`
		ClusterPermissions []struct {
			ServiceAccountName string `json:"serviceAccountName"`
		} `json:"clusterPermissions"`
	}
	require.NoError(t, yaml.Unmarshal(csv.Spec.InstallStrategy.StrategySpec.Raw, &spec))
	require.Len(t, spec.Deployments, 1)
	assert.Equal(t, "tollgate-manager", spec.Deployments[0].Name)
	require.Len(t, spec.ClusterPermissions, 1)
	assert.Equal(t, "tollgate-manager", spec.ClusterPermissions[0].ServiceAccountName)

	// Under OLM the policy namespace is the install namespace: the manager takes it from
	// POD_NAMESPACE, which the downward API sets, and no flag overrides it.
	containers := spec.Deployments[0].Spec.Template.Spec.Containers
	require.Len(t, containers, 1)
	assert.Contains(t, containers[0].Env, corev1.EnvVar{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"},
	}})
	for _, arg := range containers[0].Args {
		assert.NotContains(t, arg, "--policy-namespace", "the install namespace must be the policy namespace")
	}
	assert.Equal(t, u.GetAnnotations()["containerImage"], containers[0].Image)
}

// The CSV carries what catalogs and consoles read: the image, pinned to the release, listed
// in relatedImages, the namespace to suggest, and examples.
func TestTollgatesOwnCSVNamesItsImageAndNamespace(t *testing.T) {
	u := servedCSV(t)
	image := u.GetAnnotations()["containerImage"]
	assert.Equal(t, "ghcr.io/tollgate-dev/tollgate:"+release(t), image)
	assert.Equal(t, "tollgate-system", u.GetAnnotations()["operatorframework.io/suggested-namespace"])
	related, found, err := unstructured.NestedSlice(u.Object, "spec", "relatedImages")
	require.NoError(t, err)
	require.True(t, found, "spec.relatedImages")
	assert.Contains(t, related, map[string]any{"name": "tollgate", "image": image})
	version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
	assert.Equal(t, strings.TrimPrefix(release(t), "v"), version)
}

// Every alm-examples entry is a gate the API server accepts (an UpgradeGate, an
// ExtensionGate), and they are the samples of config/samples.
func TestTollgatesOwnALMExamplesAreValidUpgradeGates(t *testing.T) {
	u := servedCSV(t)
	var examples []map[string]any
	require.NoError(t, json.Unmarshal([]byte(u.GetAnnotations()["alm-examples"]), &examples), "alm-examples is a JSON array")
	var kinds []string
	for _, example := range examples {
		obj := &unstructured.Unstructured{Object: example}
		assert.Equal(t, "tollgate.dev/v1alpha1", obj.GetAPIVersion())
		assert.Empty(t, obj.GetNamespace(), "a console creates examples in the namespace at hand (an UpgradeGate) or the cluster (an ExtensionGate)")
		kinds = append(kinds, obj.GetKind())
		switch obj.GetKind() {
		case "UpgradeGate":
			obj.SetNamespace(namespace(t, ours))
			requireSample(t, obj, "upgradegate.yaml", &tollgatev1alpha1.UpgradeGate{}, &tollgatev1alpha1.UpgradeGate{})
		case "ExtensionGate":
			requireSample(t, obj, "extensiongate.yaml", &tollgatev1alpha1.ExtensionGate{}, &tollgatev1alpha1.ExtensionGate{})
		}
	}
	assert.ElementsMatch(t, []string{"UpgradeGate", "ExtensionGate"}, kinds)
}

// requireSample creates the example obj, reads it back into got, and requires its name and
// spec to be config/samples/<file>'s (read into want).
func requireSample(t *testing.T, obj *unstructured.Unstructured, file string, want, got client.Object) {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(repo.Path("config", "samples", file))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, want))
	require.NoError(t, ours.Client.Create(ctx, obj), "the API server accepts the example")
	require.NoError(t, ours.Client.Get(ctx, client.ObjectKeyFromObject(obj), got))
	assert.Equal(t, want.GetName(), got.GetName())
	assert.Equal(t, specOf(t, want), specOf(t, got))
}

// specOf is obj's spec as JSON.
func specOf(t *testing.T, obj client.Object) string {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	b, err := json.Marshal(m["spec"])
	require.NoError(t, err)
	return string(b)
}

// The file-based catalog holds the package, its channel and the bundle, and agrees with the
// CSV and the VERSION file.
func TestTollgatesOwnCatalogHoldsTheBundle(t *testing.T) {
	objs, err := controlplane.DecodeYAML(bundleFile(t, "catalog", "tollgate", "catalog.yaml"))
	require.NoError(t, err)
	bySchema := map[string][]map[string]any{}
	for _, o := range objs {
		schema, _ := o.Object["schema"].(string)
		bySchema[schema] = append(bySchema[schema], o.Object)
	}
	require.Len(t, bySchema, 3, "olm.package, olm.channel and olm.bundle, nothing else")
	require.Len(t, bySchema["olm.package"], 1)
	require.Len(t, bySchema["olm.channel"], 1)
	require.Len(t, bySchema["olm.bundle"], 1)

	var csv struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Version                   string `json:"version"`
			CustomResourceDefinitions struct {
				Owned []struct{ Name, Version, Kind string } `json:"owned"`
			} `json:"customresourcedefinitions"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(bundleFile(t, "olm", "manifests", "tollgate.clusterserviceversion.yaml"), &csv))
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	require.NoError(t, yaml.Unmarshal(bundleFile(t, "olm", "metadata", "annotations.yaml"), &meta))

	pkg, ch := bySchema["olm.package"][0], bySchema["olm.channel"][0]
	assert.Equal(t, meta.Annotations["operators.operatorframework.io.bundle.package.v1"], pkg["name"])
	assert.Equal(t, meta.Annotations["operators.operatorframework.io.bundle.channel.default.v1"], pkg["defaultChannel"])
	assert.Equal(t, pkg["defaultChannel"], ch["name"])
	assert.Equal(t, pkg["name"], ch["package"])
	assert.Equal(t, []any{map[string]any{"name": csv.Metadata.Name}}, ch["entries"])

	var bundle struct {
		Name       string `json:"name"`
		Package    string `json:"package"`
		Image      string `json:"image"`
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
		RelatedImages []struct{ Name, Image string } `json:"relatedImages"`
	}
	raw, err := json.Marshal(bySchema["olm.bundle"][0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &bundle))
	assert.Equal(t, csv.Metadata.Name, bundle.Name)
	assert.Equal(t, pkg["name"], bundle.Package)
	assert.Equal(t, "ghcr.io/tollgate-dev/tollgate-bundle:"+release(t), bundle.Image)
	assert.Contains(t, bundle.RelatedImages, struct{ Name, Image string }{"tollgate", csv.Metadata.Annotations["containerImage"]})

	props := map[string][]string{}
	for _, p := range bundle.Properties {
		props[p.Type] = append(props[p.Type], string(p.Value))
	}
	require.Len(t, props["olm.package"], 1)
	assert.JSONEq(t, `{"packageName":"tollgate","version":"`+strings.TrimPrefix(release(t), "v")+`"}`, props["olm.package"][0])
	assert.Equal(t, strings.TrimPrefix(release(t), "v"), csv.Spec.Version)
	require.Len(t, csv.Spec.CustomResourceDefinitions.Owned, 2)
	require.Len(t, props["olm.gvk"], 2)
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, _ := strings.Cut(owned.Name, ".")
		gvk := `{"group":"` + group + `","version":"` + owned.Version + `","kind":"` + owned.Kind + `"}`
		assert.True(t, slices.ContainsFunc(props["olm.gvk"], func(p string) bool { return jsonEqual(p, gvk) }), "olm.gvk %s", gvk)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// dockerfile reads the instructions of a Dockerfile: LABELs as a map, the other lines as
// they are.
func dockerfile(t *testing.T, data []byte) (labels map[string]string, lines []string) {
	t.Helper()
	labels = map[string]string{}
	label := regexp.MustCompile(`^LABEL ([^=\s]+)=(\S+)$`)
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if m := label.FindStringSubmatch(line); m != nil {
			labels[m[1]] = m[2]
			continue
		}
		lines = append(lines, line)
	}
	return labels, lines
}

// The bundle image's labels are its metadata/annotations.yaml, and it copies the folders
// they name; the catalog image serves bundles/catalog.
func TestTollgatesOwnDockerfilesMatchTheirContent(t *testing.T) {
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	require.NoError(t, yaml.Unmarshal(bundleFile(t, "olm", "metadata", "annotations.yaml"), &meta))
	labels, lines := dockerfile(t, bundleFile(t, "olm", "bundle.Dockerfile"))
	assert.Equal(t, meta.Annotations, labels)
	assert.Equal(t, []string{"FROM scratch", "COPY manifests /manifests/", "COPY metadata /metadata/"}, lines)
	for _, dir := range []string{labels["operators.operatorframework.io.bundle.manifests.v1"], labels["operators.operatorframework.io.bundle.metadata.v1"]} {
		assert.DirExists(t, repo.Path("bundles", "olm", dir))
	}

	labels, lines = dockerfile(t, bundleFile(t, "catalog.Dockerfile"))
	assert.Equal(t, map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"}, labels)
	// Built on the opm the tests validate and serve the catalog with, not on :latest.
	gomod, err := os.ReadFile(repo.Path("hack", "tools", "olm", "go.mod"))
	require.NoError(t, err)
	pin := regexp.MustCompile(`(?m)^\s*github\.com/operator-framework/operator-registry (v\S+)`).FindSubmatch(gomod)
	require.NotNil(t, pin, "hack/tools/olm/go.mod pins operator-registry")
	assert.Equal(t, "FROM quay.io/operator-framework/opm:"+string(pin[1]), lines[0])
	assert.Contains(t, lines, "ADD catalog /configs")
	assert.Contains(t, lines, `ENTRYPOINT ["/bin/opm"]`)
	assert.Contains(t, lines, `CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]`)
}

// The bundle carries the aggregated tollgate-operand-reader ClusterRole of config/rbac, which a
// CSV's clusterPermissions cannot express, and the API server accepts it as it is. Its binding
// is not in the bundle: its subject's namespace is the install namespace.
func TestTollgatesOwnBundleCarriesTheOperandReaderRole(t *testing.T) {
	want := map[string]any{}
	objs, err := controlplane.DecodeYAML(mustRead(t, repo.Path("config", "rbac", "operand_reader_role.yaml")))
	require.NoError(t, err)
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			want = o.Object
		}
	}
	require.NotEmpty(t, want)

	roles := 0
	entries, err := os.ReadDir(repo.Path("bundles", "olm", "manifests"))
	require.NoError(t, err)
	for _, e := range entries {
		objs, err := controlplane.DecodeYAML(bundleFile(t, "olm", "manifests", e.Name()))
		require.NoError(t, err)
		for _, o := range objs {
			assert.NotEqual(t, "ClusterRoleBinding", o.GetKind(), "%s: a binding's subject namespace is known only at install", e.Name())
			if o.GetKind() != "ClusterRole" || o.GetName() != "tollgate-operand-reader" {
				continue
			}
			roles++
			assert.Equal(t, want["aggregationRule"], o.Object["aggregationRule"], "aggregated as in config/rbac")
			o.SetName("compat-" + o.GetName())
			require.NoError(t, ours.Client.Create(context.Background(), o), "the API server accepts the bundled role")
			t.Cleanup(func() { _ = ours.Client.Delete(context.Background(), o) })
		}
	}
	assert.Equal(t, 1, roles, "bundles/olm/manifests holds tollgate-operand-reader once")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
