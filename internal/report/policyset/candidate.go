package policyset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

// Candidate compiles a candidate policy set: f's bundles (those in force and the candidate's),
// the policy ConfigMaps read through r with those of the files configMaps replacing those of
// the same name, and f.Dir last. Anything that keeps it from compiling is an error naming the
// file as its author knows it.
func (f Sources) Candidate(ctx context.Context, r client.Reader, configMaps []string) (*engine.Engine, error) {
	base, local, err := f.Base(ctx)
	if err != nil {
		return nil, fmt.Errorf("the candidate: %w", err)
	}
	own := base
	own.Modules = append(slices.Clone(base.Modules), local...)
	e, err := engine.New(ctx, own)
	if err != nil {
		return nil, candidateError(err, nil, f.Dir, local, nil)
	}
	cms, _ := policysource.List(ctx, r, f.Namespace) // unreadable: left out, as for the policies in force (warned)
	files := map[string]string{}
	for _, path := range configMaps {
		read, err := policysource.ReadConfigMapFile(path, f.Namespace)
		if err != nil {
			return nil, fmt.Errorf("--configmap %w", err)
		}
		for _, cm := range read {
			files[cm.Name] = path
			cms = slices.DeleteFunc(cms, func(c corev1.ConfigMap) bool { return c.Name == cm.Name })
			cms = append(cms, cm)
		}
	}
	if len(cms) == 0 {
		return e, nil
	}
	slices.SortFunc(cms, func(a, b corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	set := policysource.Assemble(base, cms)
	set.Options.Modules = append(set.Options.Modules, local...)
	if e, err = set.Compile(ctx); err != nil || e != nil {
		return e, err
	}
	var items []engine.CompileErrorItem
	for _, name := range slices.Sorted(maps.Keys(set.Problems)) {
		for _, it := range set.Problems[name] {
			if it.File == "" || !strings.HasPrefix(it.File, "configmap/") {
				it.Message = configMapLabel(name, files) + ": " + it.Message
			}
			items = append(items, it)
		}
	}
	return nil, candidateError(&engine.CompileError{Items: items}, files, f.Dir, local, set.Origin)
}

func configMapLabel(name string, files map[string]string) string {
	switch {
	case name == "":
		return "an OPA bundle"
	case files[name] != "":
		return fmt.Sprintf("%s (ConfigMap %s)", files[name], name)
	default:
		return "ConfigMap " + name + " (in force)"
	}
}

// candidateError names each problem's file as the author knows it: the --policy-dir file, or
// the --configmap file and key.
func candidateError(err error, files map[string]string, dir string, local []engine.Module, origin map[string]string) error {
	var ce *engine.CompileError
	if !errors.As(err, &ce) {
		return fmt.Errorf("the candidate: %w", err)
	}
	lines := make([]string, 0, len(ce.Items))
	for _, it := range ce.Items {
		switch name, fromCM := origin[it.File]; {
		case slices.ContainsFunc(local, func(m engine.Module) bool { return m.Path == it.File }):
			it.File = filepath.Join(dir, filepath.FromSlash(it.File))
		case fromCM:
			it.File = configMapLabel(name, files) + " key " + strings.TrimPrefix(it.File, "configmap/"+name+"/")
		}
		lines = append(lines, "  "+it.String())
	}
	return fmt.Errorf("the candidate policies do not compile; nothing is compared. Fix:\n%s", strings.Join(lines, "\n"))
}
