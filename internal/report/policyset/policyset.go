package policyset

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
)

// Sources are where a command's policy set comes from besides the embedded policies: OPA
// bundles (Bundles: directories, .tar.gz files or bundle server URLs), the policy ConfigMaps
// of Namespace, and the .rego files of Dir, which replace embedded files of the same path.
type Sources struct {
	Dir       string
	Bundles   []string
	Namespace string
}

// Engine compiles the policy set the manager would run, read through r (the live cluster or a
// snapshot): embedded, then --bundle, then the policy ConfigMaps, then --policy-dir (so a
// local change is the last word). ConfigMaps the manager would reject are reported on warn
// and left out, as the manager keeps them out of service.
func (f Sources) Engine(ctx context.Context, r client.Reader, warn io.Writer) (*engine.Engine, error) {
	e, _, err := f.Build(ctx, r, warn)
	return e, err
}

// Build is Engine, and what explain compares with the policy set the manager runs: the policy
// ConfigMaps read, whether each is in the set, and what the manager says it serves of each.
func (f Sources) Build(ctx context.Context, r client.Reader, warn io.Writer) (*engine.Engine, *explain.PolicyView, error) {
	view := &explain.PolicyView{Bundles: f.Bundles, PolicyDir: f.Dir}
	base, local, err := f.Base(ctx)
	if err != nil {
		return nil, nil, err
	}
	withLocal := func(o engine.Options) engine.Options {
		o.Modules = append(slices.Clone(o.Modules), local...)
		return o
	}
	own, err := Compile(ctx, withLocal(base)) // the flags' own policies must compile
	if err != nil {
		return nil, nil, err
	}
	set, err := policysource.Read(ctx, r, f.Namespace, base)
	if err != nil {
		fmt.Fprintf(warn, "warning: cannot read the policy ConfigMaps in %s (%v); they are left out\n", f.Namespace, err)
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
		fmt.Fprintf(warn, "warning: policy ConfigMap %s/%s is not in service: %s\n", f.Namespace, name, &engine.CompileError{Items: set.Problems[name]})
	}
	fmt.Fprintf(warn, "warning: the manager keeps its last good policy set while a ConfigMap is rejected; this evaluation leaves all policy ConfigMaps out\n")
	return own, view, nil
}

// sources describes the policy ConfigMaps cms for explain: used says whether they are in the set.
func (f Sources) sources(cms []corev1.ConfigMap, used bool) []explain.PolicySource {
	out := make([]explain.PolicySource, 0, len(cms))
	for _, cm := range cms {
		s := explain.PolicySource{Namespace: f.Namespace, Name: cm.Name, Digest: policysource.Digest(cm), Used: used}
		st, err := policysource.StatusOf(cm)
		if err != nil {
			s.Unreadable = err.Error()
		}
		s.Manager = st
		out = append(out, s)
	}
	return out
}

// Base is the embedded policies with --bundle, and the --policy-dir modules.
func (f Sources) Base(ctx context.Context) (engine.Options, []engine.Module, error) {
	var base engine.Options
	if len(f.Bundles) > 0 {
		src, err := policysource.LoadBundles(ctx, f.Bundles, policysource.BundleOptions{Once: true})
		if err != nil {
			return base, nil, err
		}
		base.Bundles = slices.Clone(src.Bundles())
	}
	if f.Dir == "" {
		return base, nil, nil
	}
	local, err := policysource.LoadDir(f.Dir)
	if err != nil {
		return base, nil, fmt.Errorf("--policy-dir: %w", err)
	}
	return base, local, nil
}

// Offline compiles the policy set of a command without a cluster: the embedded policies with
// Bundles and Dir; the policy ConfigMaps are not read.
func (f Sources) Offline(ctx context.Context) (*engine.Engine, error) {
	base, local, err := f.Base(ctx)
	if err != nil {
		return nil, err
	}
	base.Modules = append(slices.Clone(base.Modules), local...)
	return Compile(ctx, base)
}

// Compile builds the engine and says which file to fix when it does not compile.
func Compile(ctx context.Context, opts engine.Options) (*engine.Engine, error) {
	e, err := engine.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("the policies do not compile; fix the files named below and run again: %w", err)
	}
	return e, nil
}
