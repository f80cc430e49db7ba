package olm

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// opmValidate runs `opm validate dir`, the check a catalog image's build runs.
func opmValidate(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(olmBin, "opm"), "validate", dir).CombinedOutput() //nolint:gosec // opm, built by make olm
	require.NoError(t, err, "opm validate %s:\n%s", dir, out)
}

// Tollgate's own file-based catalog is one opm serves: bundles/catalog is generated
// (make manifests), and this is the check that what it generates is a catalog.
func TestOwnCatalogPassesOPMValidate(t *testing.T) {
	requireOLM(t)
	opmValidate(t, repo.Path("bundles", "catalog"))
}

// The suite's catalogs, bundles with embedded objects and no image, are valid catalogs too.
func TestSuiteCatalogPassesOPMValidate(t *testing.T) {
	requireOLM(t)
	dir := t.TempDir()
	require.NoError(t, writeCatalog(dir, []release{
		{pkg: "alpha", version: "1.0.0"},
		{pkg: "alpha", version: "1.1.0", replaces: csvName("alpha", "1.0.0"), requires: []string{"beta"}},
		{pkg: "beta", version: "1.0.0"},
	}))
	opmValidate(t, dir)
}
