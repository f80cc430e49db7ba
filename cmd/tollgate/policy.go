package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/explain"
	"github.com/tollgate-dev/tollgate/policysource"
)

// policyFlags choose the policy set of eval and explain: the embedded policies, plus OPA
// bundles, plus the policy ConfigMaps, plus the .rego files of a folder (which replace
// embedded files of the same path).
type policyFlags struct {
	dir       string
	bundles   []string
	namespace string
}

func (f *policyFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "policy-dir", "", "folder of extra .rego modules; a file with the path of an embedded one (e.g. upgrade/upgrade.rego) replaces it; *_test.rego files are skipped")
	cmd.Flags().StringSliceVar(&f.bundles, "bundle", nil, "OPA bundle to load as the manager does: a directory, a .tar.gz file, or an http(s) bundle server URL (repeatable)")
	cmd.Flags().StringVar(&f.namespace, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) to use, as the manager does")
}

// engine compiles the policy set the manager would run, read through r (the live cluster or a
// snapshot): embedded, then --bundle, then the policy ConfigMaps, then --policy-dir (so a
// local change is the last word). ConfigMaps the manager would reject are reported on warn
// and left out, as the manager keeps them out of service.
func (f *policyFlags) engine(ctx context.Context, r client.Reader, warn io.Writer) (*engine.Engine, error) {
	e, _, err := f.build(ctx, r, warn)
	return e, err
}

// build is engine, and what explain compares with the policy set the manager runs: the policy
// ConfigMaps read, whether each is in the set, and what the manager says it serves of each.
func (f *policyFlags) build(ctx context.Context, r client.Reader, warn io.Writer) (*engine.Engine, *explain.PolicyView, error) {
	view := &explain.PolicyView{Bundles: f.bundles, PolicyDir: f.dir}
	base, local, err := f.base(ctx)
	if err != nil {
		return nil, nil, err
	}
	withLocal := func(o engine.Options) engine.Options {
		o.Modules = append(slices.Clone(o.Modules), local...)
		return o
	}
	own, err := compile(ctx, withLocal(base)) // the flags' own policies must compile
	if err != nil {
		return nil, nil, err
	}
	set, err := policysource.Read(ctx, r, f.namespace, base)
	if err != nil {
		fmt.Fprintf(warn, "warning: cannot read the policy ConfigMaps in %s (%v); they are left out\n", f.namespace, err)
		return own, view, nil
	}
	if len(set.ConfigMaps) == 0 {
		return own, view, nil
	}
	set.Options = withLocal(set.Options)
	e, err := set.Compile(ctx)
	view.ConfigMaps = f.sources(set.ConfigMaps, e != nil)
	if e != nil || err != nil {
		return e, view, err
	}
	for _, name := range slices.Sorted(maps.Keys(set.Problems)) {
		fmt.Fprintf(warn, "warning: policy ConfigMap %s/%s is not in service: %s\n", f.namespace, name, &engine.CompileError{Items: set.Problems[name]})
	}
	fmt.Fprintf(warn, "warning: the manager keeps its last good policy set while a ConfigMap is rejected; this evaluation leaves all policy ConfigMaps out\n")
	return own, view, nil
}

// sources describes the policy ConfigMaps cms for explain: used says whether they are in the set.
func (f *policyFlags) sources(cms []corev1.ConfigMap, used bool) []explain.PolicySource {
	out := make([]explain.PolicySource, 0, len(cms))
	for _, cm := range cms {
		s := explain.PolicySource{Namespace: f.namespace, Name: cm.Name, Digest: policysource.Digest(cm), Used: used}
		st, err := policysource.StatusOf(cm)
		if err != nil {
			s.Unreadable = err.Error()
		}
		s.Manager = st
		out = append(out, s)
	}
	return out
}

// base is the embedded policies with --bundle, and the --policy-dir modules.
func (f *policyFlags) base(ctx context.Context) (engine.Options, []engine.Module, error) {
	var base engine.Options
	if len(f.bundles) > 0 {
		src, err := policysource.LoadBundles(ctx, f.bundles, policysource.BundleOptions{Once: true})
		if err != nil {
			return base, nil, err
		}
		base.Bundles = slices.Clone(src.Bundles())
	}
	if f.dir == "" {
		return base, nil, nil
	}
	local, err := policysource.LoadDir(f.dir)
	if err != nil {
		return base, nil, fmt.Errorf("--policy-dir: %w", err)
	}
	return base, local, nil
}

// compile builds the engine and says which file to fix when it does not compile.
func compile(ctx context.Context, opts engine.Options) (*engine.Engine, error) {
	e, err := engine.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("the policies do not compile; fix the files named below and run again: %w", err)
	}
	return e, nil
}
