package policysource_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/policies"
)

func TestExportEmbeddedWritesABundleFolder(t *testing.T) {
	ctx := context.Background()
	for _, withTests := range []bool{false, true} {
		dir := t.TempDir()
		n, revision, err := policysource.ExportEmbedded(ctx, dir, withTests)
		require.NoError(t, err)
		e, err := engine.New(ctx, engine.Options{})
		require.NoError(t, err)
		assert.Equal(t, e.Revision(), revision)

		var manifest struct {
			Revision string   `json:"revision"`
			Roots    []string `json:"roots"`
		}
		b, err := os.ReadFile(filepath.Join(dir, ".manifest"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &manifest))
		assert.Equal(t, revision, manifest.Revision)
		assert.Equal(t, []string{"tollgate"}, manifest.Roots)

		want := 0
		require.NoError(t, fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
				return err
			}
			exported, readErr := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if strings.HasSuffix(p, "_test.rego") && !withTests {
				assert.ErrorIs(t, readErr, os.ErrNotExist, "%s: tests only with withTests", p)
				return nil
			}
			want++
			require.NoError(t, readErr)
			embedded, err := fs.ReadFile(policies.FS, p)
			require.NoError(t, err)
			assert.Equal(t, string(embedded), string(exported), p)
			return nil
		}))
		assert.Equal(t, want, n)
	}
}
