package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/spf13/cobra"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
)

// policyFlags choose the policy set of eval and explain: the embedded policies, plus OPA
// bundles, plus the .rego files of a folder (which replace embedded files of the same path).
type policyFlags struct {
	dir       string
	bundles   []string
	namespace string
}

func (f *policyFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "policy-dir", "", "folder of extra .rego modules; a file with the path of an embedded one (e.g. upgrade/upgrade.rego) replaces it; *_test.rego files are skipped")
	cmd.Flags().StringSliceVar(&f.bundles, "bundle", nil, "OPA bundle to load as the manager does: a directory, a .tar.gz file, or an http(s) bundle server URL (repeatable)")
	cmd.Flags().StringVar(&f.namespace, "policy-namespace", "tollgate-system", "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) to use, as the manager does")
}

// engine compiles the policy set the manager would run, read through r (the live cluster or a
// snapshot): embedded, then --bundle, then the policy ConfigMaps, then --policy-dir (so a
// local change is the last word). A ConfigMap the manager would reject is reported on warn
// and left out, as the manager leaves it out of service.
func (f *policyFlags) engine(ctx context.Context, r client.Reader, warn io.Writer) (*engine.Engine, error) {
	base, err := f.options(ctx, engine.Options{})
	if err != nil {
		return nil, err
	}
	local, err := f.local()
	if err != nil {
		return nil, err
	}
	withLocal := func(o engine.Options) engine.Options {
		o.Modules = append(slices.Clone(o.Modules), local...)
		return o
	}
	src, err := controllers.ReadPolicySources(ctx, r, f.namespace, base)
	switch {
	case err != nil:
		fmt.Fprintf(warn, "warning: cannot read the policy ConfigMaps in %s (%v); using the embedded policies%s only\n", f.namespace, err, bundleNote(f.bundles))
	case len(src.Problems) > 0:
		for name, items := range src.Problems {
			fmt.Fprintf(warn, "warning: policy ConfigMap %s/%s is not in service: %s\n", f.namespace, name, (&engine.CompileError{Items: items}).Error())
		}
		fmt.Fprintf(warn, "warning: the manager keeps its last good policy set while a ConfigMap is rejected; this evaluation leaves all policy ConfigMaps out\n")
	default:
		e, err := engine.New(ctx, withLocal(src.Options))
		if err == nil {
			return e, nil
		}
		if len(src.ConfigMaps) == 0 {
			return nil, fmt.Errorf("the policies do not compile; fix the files named below and run again: %w", err)
		}
		var ce *engine.CompileError
		if errors.As(err, &ce) {
			for _, it := range ce.Items {
				if name := src.Origin[it.File]; name != "" {
					fmt.Fprintf(warn, "warning: policy ConfigMap %s/%s does not compile: %s\n", f.namespace, name, it)
				}
			}
		}
		fmt.Fprintf(warn, "warning: the policy ConfigMaps in %s do not compile with the rest (%v); this evaluation leaves them out\n", f.namespace, err)
	}
	return compile(ctx, withLocal(base))
}

func bundleNote(bundles []string) string {
	if len(bundles) == 0 {
		return ""
	}
	return " and --bundle"
}

// options returns the engine options for the chosen policy set on top of base (which may
// already carry ConfigMap modules and data).
func (f *policyFlags) options(ctx context.Context, base engine.Options) (engine.Options, error) {
	if base.Policies == nil {
		base.Policies = policies.FS
	}
	if len(f.bundles) > 0 {
		src, err := loadBundlesOnce(ctx, f.bundles)
		if err != nil {
			return base, err
		}
		base.Bundles = append([]*bundle.Bundle(nil), src.Bundles()...)
	}
	return base, nil
}

// local is the --policy-dir modules, or none.
func (f *policyFlags) local() ([]engine.Module, error) {
	if f.dir == "" {
		return nil, nil
	}
	return loadPolicyDir(f.dir)
}

// compile builds the engine and says which file to fix when it does not compile.
func compile(ctx context.Context, opts engine.Options) (*engine.Engine, error) {
	e, err := engine.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("the policies do not compile; fix the files named below and run again: %w", err)
	}
	return e, nil
}

// loadPolicyDir reads every .rego file under dir (except *_test.rego) as a module whose path is
// relative to dir, slash-separated, exactly as engine.Module expects.
func loadPolicyDir(dir string) ([]engine.Module, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--policy-dir: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("--policy-dir %s is not a folder: give the folder that holds your .rego files", dir)
	}
	var mods []engine.Module
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".rego") || strings.HasSuffix(p, "_test.rego") {
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
		return nil, fmt.Errorf("read --policy-dir %s: %w", dir, err)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("--policy-dir %s holds no .rego file", dir)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}
