package policysource

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tollgate-dev/tollgate/engine"
)

// LoadDir reads every .rego file under dir (except *_test.rego) as a module whose path is
// relative to dir, slash-separated, so a file with the path of an embedded module replaces it.
func LoadDir(dir string) ([]engine.Module, error) {
	return ReadDir(dir, false)
}

// ReadDir is LoadDir, with the *_test.rego files too when tests is set (`tollgate policy test`).
// The modules are sorted by path.
func ReadDir(dir string, tests bool) ([]engine.Module, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("policy folder: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: give the folder that holds your .rego files", dir)
	}
	var mods []engine.Module
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".rego") || (!tests && strings.HasSuffix(p, "_test.rego")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		mods = append(mods, engine.Module{Path: filepath.ToSlash(rel), Source: string(b)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read policy folder %s: %w", dir, err)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("policy folder %s holds no .rego file", dir)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}
