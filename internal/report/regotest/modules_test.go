package regotest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModulesAreThePolicySetTheManagerWouldRun: the embedded policies (their tests only
// when asked), then each dir's files under dir<i>/, a file with an embedded path replacing
// the embedded one.
func TestModulesAreThePolicySetTheManagerWouldRun(t *testing.T) {
	site := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(site, "upgrade"), 0o755))
	for p, src := range map[string]string{
		"upgrade/upgrade.rego": "package tollgate.upgrade\n",
		"site.rego":            "package tollgate.packs.site\n",
		"site_test.rego":       "package tollgate.packs.site_test\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(site, filepath.FromSlash(p)), []byte(src), 0o600))
	}
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "other.rego"), []byte("package tollgate.packs.other\n"), 0o600))
	slash := filepath.ToSlash

	mods, err := modules(context.Background(), Options{}, []string{site, other})
	require.NoError(t, err)
	byKey := map[string]module{}
	for i, m := range mods {
		byKey[m.key] = m
		if i > 0 {
			assert.Less(t, mods[i-1].key, m.key, "sorted by key")
		}
	}
	assert.NotContains(t, byKey, "upgrade/upgrade.rego", "replaced by the site's")
	assert.Equal(t, module{key: slash(site) + "/upgrade/upgrade.rego", enginePath: "upgrade/upgrade.rego", source: "package tollgate.upgrade\n"}, byKey[slash(site)+"/upgrade/upgrade.rego"])
	assert.Equal(t, "dir0/site.rego", byKey[slash(site)+"/site.rego"].enginePath)
	assert.True(t, byKey[slash(site)+"/site_test.rego"].test)
	assert.Equal(t, "dir1/other.rego", byKey[slash(other)+"/other.rego"].enginePath)
	assert.Contains(t, byKey, "main/main.rego", "the embedded policies")
	for key, m := range byKey {
		if m.enginePath == key { // embedded
			assert.False(t, m.test, "%s: the embedded tests only when asked", key)
		}
	}

	withTests, err := modules(context.Background(), Options{EmbeddedTests: true}, nil)
	require.NoError(t, err)
	tests := 0
	for _, m := range withTests {
		if m.test {
			tests++
		}
	}
	assert.Positive(t, tests, "the embedded tests, when asked")
}
