package olmv1

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRegistryServesTheSampleImages: the registry serves the bundle images and the catalog
// image as catalogd and operator-controller read them, and publishing a catalog revision moves
// the tag ClusterCatalogs follow. It needs no OLM v1.
func TestRegistryServesTheSampleImages(t *testing.T) {
	dir := t.TempDir()
	r := startRegistry(t, newCerts(t, dir), dir)
	r.pushBundles(sample("bundles"))
	bundle, err := r.pull(r.bundleRef("1.1.0"))
	require.NoError(t, err)
	cfg, err := bundle.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "registry+v1", cfg.Config.Labels["operators.operatorframework.io.bundle.mediatype.v1"])
	require.Equal(t, pkgName, cfg.Config.Labels["operators.operatorframework.io.bundle.package.v1"])
	files, err := layerFiles(bundle)
	require.NoError(t, err)
	require.Contains(t, files["manifests/tollgate-demo.clusterserviceversion.yaml"], "name: tollgate-demo.v1.1.0")
	require.Contains(t, files, "manifests/widgets.demo.tollgate.io.crd.yaml")
	require.Contains(t, files, "metadata/annotations.yaml")

	first := r.publishCatalog(sample("catalog"))
	second := r.publishCatalog(sample("catalog-v2"))
	require.NotEqual(t, first, second)
	catalog, err := r.pull(r.catalogRef())
	require.NoError(t, err)
	digest, err := catalog.Digest()
	require.NoError(t, err)
	require.Equal(t, second, digest, "the tag follows the latest revision")
	cfg, err = catalog.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "/configs", cfg.Config.Labels[configsLabel])
	files, err = layerFiles(catalog)
	require.NoError(t, err)
	fbc := files["configs/tollgate-demo/catalog.yaml"]
	require.Contains(t, fbc, "image: "+r.bundleRef("1.2.0"))
	require.NotContains(t, fbc, registryVar)
}
