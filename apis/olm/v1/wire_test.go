package v1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// observed are the objects real OLM v1 wrote (test/testdata/olmv1/observed/<version>).
func observed(t *testing.T, version, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(repo.Path("test", "testdata", "olmv1", "observed", version, "*-"+kind+"-*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// TestEveryFieldOLMv1WritesIsKnown: each ClusterExtension and ClusterCatalog that
// operator-controller and catalogd wrote, v1.2.0 and v1.11.0, decodes strictly: no field of
// theirs is unknown to the copies.
func TestEveryFieldOLMv1WritesIsKnown(t *testing.T) {
	for kind, obj := range map[string]func() any{
		"clusterextension": func() any { return &olmv1.ClusterExtension{} },
		"clustercatalog":   func() any { return &olmv1.ClusterCatalog{} },
	} {
		for _, f := range append(observed(t, "v1.2.0", kind), observed(t, "v1.11.0", kind)...) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.NoError(t, yaml.UnmarshalStrict(b, obj()), filepath.Base(f))
		}
	}
}

// TestWhatAGateReadsIsReadFromBothVersions: the fields a gate decides from, from v1.2.0 and
// v1.11.0 objects alike (v1.11.0 leaves spec.serviceAccount out).
func TestWhatAGateReadsIsReadFromBothVersions(t *testing.T) {
	for _, version := range []string{"v1.2.0", "v1.11.0"} {
		var ext olmv1.ClusterExtension
		b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "observed", version, "36-clusterextension-installed-1.2.0.yaml"))
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(b, &ext))
		assert.Equal(t, ">=1.0.0 <1.3.0", ext.Spec.Source.Catalog.Version, version)
		assert.Equal(t, olmv1.UpgradeConstraintPolicyCatalogProvided, ext.Spec.Source.Catalog.UpgradeConstraintPolicy, version)
		require.NotNil(t, ext.Status.Install, version)
		assert.Equal(t, olmv1.BundleMetadata{Name: "tollgate-demo.v1.2.0", Version: "1.2.0"}, ext.Status.Install.Bundle, version)
		assert.Equal(t, version == "v1.2.0", ext.Spec.ServiceAccount != nil, version)

		var cat olmv1.ClusterCatalog
		b, err = os.ReadFile(repo.Path("test", "testdata", "olmv1", "observed", version, "33-clustercatalog-revision-2.yaml"))
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(b, &cat))
		require.NotNil(t, cat.Status.URLs, version)
		assert.True(t, strings.HasSuffix(cat.Status.URLs.Base, "/catalogs/tollgate-demo-catalog"), version)
		require.NotNil(t, cat.Status.ResolvedSource, version)
		assert.Contains(t, cat.Status.ResolvedSource.Image.Ref, "@sha256:", version)
	}
}
