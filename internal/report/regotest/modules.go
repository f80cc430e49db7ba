package regotest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/policies"
)

// module is one module of the test run: its key (the path reported), and the path the
// manager's engine would know it by.
type module struct {
	key, enginePath, source string
	test                    bool
}

// modules are the embedded policies (with their tests when asked), the bundles' modules and
// the dirs' .rego files, a dir file with an embedded path replacing the embedded one; sorted
// by key.
func modules(ctx context.Context, o Options, dirs []string) ([]module, error) {
	byKey, err := embeddedModules(o.EmbeddedTests)
	if err != nil {
		return nil, err
	}
	embedded := map[string]bool{}
	for key := range byKey {
		embedded[key] = true
	}
	if err := addBundleModules(ctx, byKey, o.Bundles); err != nil {
		return nil, err
	}
	for i, dir := range dirs {
		if err := addDirModules(byKey, embedded, dir, i); err != nil {
			return nil, err
		}
	}
	return slices.SortedFunc(maps.Values(byKey), func(a, b module) int { return strings.Compare(a.key, b.key) }), nil
}

// embeddedModules are the embedded policies by path, with their tests when tests is set.
func embeddedModules(tests bool) (map[string]module, error) {
	byKey := map[string]module{}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		test := strings.HasSuffix(p, "_test.rego")
		if test && !tests {
			return nil
		}
		b, err := fs.ReadFile(policies.FS, p)
		byKey[p] = module{key: p, enginePath: p, source: string(b), test: test}
		return err
	})
	return byKey, err
}

// addBundleModules adds every module of the bundles, by its path in its bundle.
func addBundleModules(ctx context.Context, byKey map[string]module, bundles []string) error {
	if len(bundles) == 0 {
		return nil
	}
	src, err := policysource.LoadBundles(ctx, bundles, policysource.BundleOptions{Once: true})
	if err != nil {
		return err
	}
	for _, b := range src.Bundles() {
		for _, m := range b.Modules {
			p := strings.TrimPrefix(cmp.Or(m.RelativePath, m.Path), "/")
			byKey[p] = module{key: p, enginePath: p, source: string(m.Raw), test: strings.HasSuffix(p, "_test.rego")}
		}
	}
	return nil
}

// addDirModules adds the .rego files of the i-th dir, by their path with dir; the engine
// knows them under dir<i>/, or by the embedded path they replace.
func addDirModules(byKey map[string]module, embedded map[string]bool, dir string, i int) error {
	files, err := policysource.ReadDir(dir, true)
	if err != nil {
		return err
	}
	for _, f := range files {
		key := path.Join(filepath.ToSlash(dir), f.Path)
		m := module{key: key, enginePath: path.Join(fmt.Sprintf("dir%d", i), f.Path), source: f.Source, test: strings.HasSuffix(f.Path, "_test.rego")}
		if embedded[f.Path] {
			delete(byKey, f.Path)
			m.enginePath = f.Path
		}
		byKey[m.key] = m
	}
	return nil
}

// checkAsManager compiles the non-test modules as the manager would (strict, the contract,
// its capabilities), and names each problem by the file the author knows.
func checkAsManager(ctx context.Context, mods []module) error {
	var opts engine.Options // the embedded policies, which the modules replace or add to
	byPath := map[string]string{}
	for _, m := range mods {
		if !m.test {
			opts.Modules = append(opts.Modules, engine.Module{Path: m.enginePath, Source: m.source})
			byPath[m.enginePath] = m.key
		}
	}
	_, err := engine.New(ctx, opts)
	var ce *engine.CompileError
	if !errors.As(err, &ce) {
		return err
	}
	lines := make([]string, 0, len(ce.Items))
	for _, it := range ce.Items {
		if key, ok := byPath[it.File]; ok {
			it.File = key
		}
		lines = append(lines, "  "+it.String())
	}
	return fmt.Errorf("the policies do not compile as the manager compiles them:\n%s", strings.Join(lines, "\n"))
}
