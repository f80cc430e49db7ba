package olmv1

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOLMv1InstallsAndUpgradesAtItsPin: catalogd serves the sample catalog as real catalogd
// did for the fixtures, and operator-controller installs exactly the version a
// ClusterExtension pins, upgrades when the pin moves, and keeps the installed bundle when the
// pin names a version the catalog lacks.
func TestOLMv1InstallsAndUpgradesAtItsPin(t *testing.T) {
	w := newWorld(t)

	catalog := w.serveCatalog(catalogName)
	base := nestedString(catalog, "status", "urls", "base")
	require.Equal(t, fmt.Sprintf("https://localhost:%d/catalogs/%s", w.ports.catalogs, catalogName), base)
	require.Equal(t, catalogName, catalog.GetLabels()[metadataNameLabel], "catalogd's webhook labels a catalog with its name")
	require.Equal(t, w.fixtureLines("catalog-revision-1.jsonl"), w.catalogContent(base), "GET %s/api/v1/all", base)

	w.createExtension(pkgName, "1.0.0")
	installed := w.waitInstalled(pkgName, "1.0.0")
	w.requireInstalled(installed, "1.0.0")

	generation := w.pin(pkgName, "1.1.0")
	installed = w.waitInstalled(pkgName, "1.1.0")
	require.Equal(t, generation, installed.GetGeneration())
	w.requireInstalled(installed, "1.1.0")

	generation = w.pin(pkgName, "9.9.9")
	stuck := w.waitRetrying(pkgName)
	require.Equal(t, generation, stuck.GetGeneration())
	require.Contains(t, condition(stuck, "Progressing").Message, `"9.9.9"`, describe(stuck))
	w.requireInstalled(stuck, "1.1.0")
}
