package policysource

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
)

// ExportEmbedded writes the embedded policies to dir at the paths the manager knows them by,
// with a .manifest (roots ["tollgate"], the embedded set's revision) that makes dir an OPA
// bundle folder; the *_test.rego files only when withTests. Files of the same name are
// overwritten, others left alone. It returns how many policy files it wrote and the revision.
func ExportEmbedded(ctx context.Context, dir string, withTests bool) (int, string, error) {
	eng, err := engine.New(ctx, engine.Options{})
	if err != nil {
		return 0, "", fmt.Errorf("the embedded policies: %w", err)
	}
	n := 0
	err = fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		if strings.HasSuffix(p, "_test.rego") && !withTests {
			return nil
		}
		b, err := fs.ReadFile(policies.FS, p)
		if err != nil {
			return err
		}
		n++
		return writePublic(filepath.Join(dir, filepath.FromSlash(p)), b)
	})
	if err != nil {
		return 0, "", fmt.Errorf("export the policies: %w", err)
	}
	manifest, err := json.MarshalIndent(map[string]any{"revision": eng.Revision(), "roots": []string{"tollgate"}}, "", "  ")
	if err != nil {
		return 0, "", err
	}
	if err := writePublic(filepath.Join(dir, ".manifest"), append(manifest, '\n')); err != nil {
		return 0, "", fmt.Errorf("export the policies: %w", err)
	}
	return n, eng.Revision(), nil
}

// writePublic writes a file anyone may read, making its folders.
func writePublic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // the policies are public source, to read, commit and serve
		return err
	}
	return os.WriteFile(path, b, 0o644) //nolint:gosec // the policies are public source, to read, commit and serve
}
