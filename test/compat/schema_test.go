package compat

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// extensions are paths Tollgate's CatalogSource adds on purpose: the structured sources
// of the catalogsource-spec-update design, which upstream does not serve yet.
var extensions = []string{
	"CatalogSource/v1alpha1 .spec.catalogImageSource",
	"CatalogSource/v1alpha1 .spec.catalogServiceSource",
	"CatalogSource/v1alpha1 .spec.configMapSource",
}

func loadCRDs(t *testing.T, dir string) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no CRDs in %s", dir)
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.Unmarshal(data, crd), f)
		crds[crd.Spec.Names.Kind] = crd
	}
	return crds
}

// schemaType is the wire type of a schema node; int-or-string and preserved objects have no
// plain type.
func schemaType(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "" && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return "object"
	}
	return s.Type
}

// paths flattens a schema into JSON path → type; array items are written as []. A required
// field is listed a second time as "<path> (required)", so that a field our CRD requires but
// upstream does not shows as missing upstream.
func paths(prefix string, s *apiextensionsv1.JSONSchemaProps, out map[string]string) {
	out[prefix] = schemaType(s)
	for _, name := range s.Required {
		out[prefix+"."+name+" (required)"] = "required"
	}
	for name, p := range s.Properties {
		paths(prefix+"."+name, &p, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		paths(prefix+"[]", s.Items.Schema, out)
	}
}

func versionPaths(crd *apiextensionsv1.CustomResourceDefinition, version string) map[string]string {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			out := map[string]string{}
			paths("", v.Schema.OpenAPIV3Schema, out)
			return out
		}
	}
	return nil
}

func isExtension(kind, version, path string) bool {
	for _, e := range extensions {
		prefix := kind + "/" + version + " "
		if strings.HasPrefix(e, prefix) && strings.HasPrefix(path, strings.TrimPrefix(e, prefix)) {
			return true
		}
	}
	return false
}

func TestEveryDeclaredPathExistsUpstreamWithTheSameType(t *testing.T) {
	root := repo.Root()
	ours := loadCRDs(t, filepath.Join(root, "config", "crd", "olm"))
	upstream := loadCRDs(t, filepath.Join(root, "test", "testdata", "olm-upstream"))
	var kinds []string
	for kind := range ours {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	require.Equal(t, []string{"CatalogSource", "ClusterServiceVersion", "InstallPlan", "OperatorCondition", "OperatorGroup", "Subscription"}, kinds)

	checked := 0
	for kind, crd := range ours {
		up, ok := upstream[kind]
		require.True(t, ok, "upstream has no CRD for kind %s", kind)
		require.Equal(t, up.Spec.Group, crd.Spec.Group, kind)
		require.Equal(t, up.Spec.Names.Plural, crd.Spec.Names.Plural, kind)
		require.Equal(t, up.Spec.Scope, crd.Spec.Scope, kind)
		for _, v := range crd.Spec.Versions {
			t.Run(kind+"/"+v.Name, func(t *testing.T) {
				upPaths := versionPaths(up, v.Name)
				require.NotNil(t, upPaths, "upstream %s does not serve version %s", kind, v.Name)
				ourPaths := versionPaths(crd, v.Name)
				var missing []string
				for p, typ := range ourPaths {
					if isExtension(kind, v.Name, p) {
						continue
					}
					checked++
					upType, ok := upPaths[p]
					switch {
					case !ok:
						missing = append(missing, p+" is not in the upstream schema")
					case upType != typ:
						missing = append(missing, p+" is "+typ+" here but "+upType+" upstream")
					}
				}
				sort.Strings(missing)
				require.Empty(t, missing)
			})
		}
	}
	require.Greater(t, checked, 150, "the comparison must cover the declared fields")
}

func TestPathComparisonCatchesAMismatch(t *testing.T) {
	ours := map[string]string{}
	paths("", &apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"spec"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"names": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			"port":  {XIntOrString: true},
		}},
	}}, ours)
	require.Equal(t, map[string]string{"": "object", ".spec": "object", ".spec.names": "array", ".spec.names[]": "string", ".spec.port": "int-or-string",
		".spec (required)": "required"}, ours)
	require.True(t, isExtension("CatalogSource", "v1alpha1", ".spec.configMapSource.configMap"))
	require.False(t, isExtension("CatalogSource", "v1alpha1", ".spec.configMap"))
	require.False(t, isExtension("Subscription", "v1alpha1", ".spec.configMapSource"))
}
