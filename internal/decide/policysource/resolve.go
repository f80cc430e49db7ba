package policysource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/tollgate-dev/tollgate/engine"
)

// Which version of a source's policy is in service (Status.Serving, SourceStatus.Serving).
const (
	ServingCurrent  = "current"  // its current version
	ServingPrevious = "previous" // its last good version: the current one is rejected
	ServingNone     = "none"     // none: it has never compiled
)

// BundlesSource is the name under which Resolution.Sources reports the OPA bundles.
const BundlesSource = ""

// maxBlameRounds bounds the fast path of Resolve: the all-current try and two retries.
const maxBlameRounds = 3

// Versions are the versions of the policy sources a policy set was built from: each ConfigMap
// as it was read, and the bundles. The zero value knows of none.
type Versions struct {
	configMaps map[string]corev1.ConfigMap
	bundles    []*bundle.Bundle
	known      bool // bundles is known (nil bundles are a version too: none)
}

// ConfigMap is the version of the ConfigMap name in v, if v has one.
func (v Versions) ConfigMap(name string) (corev1.ConfigMap, bool) {
	cm, ok := v.configMaps[name]
	return cm, ok
}

// SourceStatus is what became of one source's current version.
type SourceStatus struct {
	// Serving is ServingCurrent, ServingPrevious or ServingNone.
	Serving string
	// Errors say why the current version is not in service (or, when Resolution.Engine is nil,
	// why the source no longer compiles with the others); empty when it is.
	Errors []engine.CompileErrorItem
}

// Resolution is the outcome of Resolve.
type Resolution struct {
	// Engine is the policy set to serve; nil when not even the last good versions compile
	// together any more (a ConfigMap the others needed was deleted): the set in service stays.
	Engine *engine.Engine
	// Served are the versions Engine was built from; the last good ones when Engine is nil.
	Served Versions
	// Sources has an entry for every current ConfigMap, by name, and one for the bundles
	// (BundlesSource) when their current version is not in service.
	Sources map[string]SourceStatus
}

// Resolve picks, for each policy source, the version to serve: its current one when it
// compiles with the others, else its last good one (last.Served), else none. One broken
// ConfigMap thus never holds back the others' changes, an emergency deny included.
//
// The algorithm is deterministic and bounded:
//
//  1. Try every source at its current version. Most changes compile: one compile.
//  2. Otherwise, each changed source that a problem is attributed to (a module of its own, its
//     own data or label) goes back to its last good version, or out when it has none, and the
//     set is tried again; at most maxBlameRounds tries in all.
//  3. If that still fails (a problem located in an embedded module, or a conflict between two
//     changed sources), start from the last good version of every changed source and add the
//     changed sources back one at a time, in name order (the bundles first), keeping each one
//     that compiles with those kept before it: one compile per changed source, and each
//     rejected source gets the errors its own addition caused.
//  4. If even the last good versions no longer compile together, nothing changes: Engine is
//     nil and the set in service stays.
//
// Sources unchanged since last are never moved back (there is nothing to go back to).
func Resolve(ctx context.Context, base engine.Options, current []corev1.ConfigMap, last Versions) (*Resolution, error) {
	t := newTrial(base, current, last)
	for range maxBlameRounds {
		out, err := t.try(ctx)
		if err != nil {
			return nil, err
		}
		if out.engine != nil {
			return t.resolution(out), nil
		}
		if !t.fallBack(out.blamed) {
			break
		}
	}
	return t.oneByOne(ctx)
}

// version is which version of a source a trial uses.
type version int

const (
	useCurrent version = iota
	usePrevious
	useNone
)

// trial is one Resolve: the sources, which version of each is tried, and why a source's
// current version was set aside.
type trial struct {
	base    engine.Options
	current map[string]corev1.ConfigMap
	bundles []*bundle.Bundle // current
	last    Versions
	use     map[string]version // by source; BundlesSource is the bundles
	errors  map[string][]engine.CompileErrorItem
}

// outcome is one compile: an engine, or the problems by source; unattributed ones under "?".
type outcome struct {
	engine *engine.Engine
	blamed map[string][]engine.CompileErrorItem
	served Versions
}

const unattributed = "?"

func newTrial(base engine.Options, current []corev1.ConfigMap, last Versions) *trial {
	t := &trial{base: base, current: map[string]corev1.ConfigMap{}, bundles: base.Bundles, last: last,
		use: map[string]version{BundlesSource: useCurrent}, errors: map[string][]engine.CompileErrorItem{}}
	t.base.Bundles = nil
	for _, cm := range current {
		t.current[cm.Name] = cm
		t.use[cm.Name] = useCurrent
	}
	return t
}

// changed says whether a source's current version differs from its last good one. Bundles
// whose last good version is unknown count as unchanged: there is nothing to go back to.
func (t *trial) changed(name string) bool {
	if name == BundlesSource {
		return t.last.known && !slices.Equal(t.bundles, t.last.bundles)
	}
	prev, ok := t.last.configMaps[name]
	cur := t.current[name]
	return !ok || prev.Labels[Label] != cur.Labels[Label] ||
		!equality.Semantic.DeepEqual(prev.Data, cur.Data) || !equality.Semantic.DeepEqual(prev.BinaryData, cur.BinaryData)
}

// fallback is the version a changed source falls back to: its last good one, else none.
func (t *trial) fallback(name string) version {
	if name == BundlesSource {
		return usePrevious // changed bundles have a known last good version
	}
	if _, ok := t.last.configMaps[name]; ok {
		return usePrevious
	}
	return useNone
}

// try assembles and compiles the sources at the versions in t.use.
func (t *trial) try(ctx context.Context) (outcome, error) {
	out := outcome{blamed: map[string][]engine.CompileErrorItem{}, served: Versions{configMaps: map[string]corev1.ConfigMap{}, known: true}}
	opts := t.base
	opts.Bundles, out.served.bundles = t.bundles, t.bundles
	if t.use[BundlesSource] == usePrevious {
		opts.Bundles, out.served.bundles = t.last.bundles, t.last.bundles
	}
	var cms []corev1.ConfigMap
	for _, name := range slices.Sorted(maps.Keys(t.current)) {
		switch t.use[name] {
		case useCurrent:
			cms = append(cms, t.current[name])
		case usePrevious:
			cms = append(cms, t.last.configMaps[name])
		}
	}
	for _, cm := range cms {
		out.served.configMaps[cm.Name] = cm
	}
	set := Assemble(opts, cms)
	if len(set.Problems) > 0 { // a ConfigMap's own label or data
		maps.Copy(out.blamed, set.Problems)
		return out, nil
	}
	e, err := engine.New(ctx, set.Options)
	var compileErr *engine.CompileError
	if !errors.As(err, &compileErr) {
		out.engine = e
		return out, err
	}
	paths := bundlePaths(opts.Bundles)
	for _, item := range compileErr.Items {
		name, ok := set.Origin[item.File]
		switch {
		case ok:
		case paths[item.File]:
			name = BundlesSource
		default:
			name = unattributed
		}
		out.blamed[name] = append(out.blamed[name], item)
	}
	return out, nil
}

func bundlePaths(bs []*bundle.Bundle) map[string]bool {
	out := map[string]bool{}
	for _, b := range bs {
		for _, m := range b.Modules {
			out[bundleModulePath(m)] = true
		}
	}
	return out
}

// fallBack moves each changed source that blamed names, and that is still at its current
// version, to its fallback. It says whether it moved any: when it did not, or when a problem
// is not attributed to a source, blaming cannot make progress.
func (t *trial) fallBack(blamed map[string][]engine.CompileErrorItem) bool {
	moved := false
	for _, name := range slices.Sorted(maps.Keys(blamed)) {
		if name == unattributed || t.use[name] != useCurrent || !t.changed(name) {
			continue
		}
		t.use[name], t.errors[name] = t.fallback(name), blamed[name]
		moved = true
	}
	_, stuck := blamed[unattributed]
	return moved && !stuck
}

// oneByOne is step 3 of Resolve.
func (t *trial) oneByOne(ctx context.Context) (*Resolution, error) {
	var changed []string
	for _, name := range slices.Sorted(maps.Keys(t.use)) {
		if t.changed(name) {
			changed = append(changed, name)
			t.use[name] = t.fallback(name)
		}
	}
	good, err := t.try(ctx)
	if err != nil {
		return nil, err
	}
	if good.engine == nil {
		return t.giveUp(good), nil
	}
	for _, name := range changed {
		t.use[name] = useCurrent
		out, err := t.try(ctx)
		if err != nil {
			return nil, err
		}
		if out.engine == nil {
			t.use[name], t.errors[name] = t.fallback(name), problems(out.blamed)
			continue
		}
		delete(t.errors, name)
		good = out
	}
	return t.resolution(good), nil
}

// problems flattens blamed: all the problems of one try.
func problems(blamed map[string][]engine.CompileErrorItem) []engine.CompileErrorItem {
	var items []engine.CompileErrorItem
	for _, name := range slices.Sorted(maps.Keys(blamed)) {
		items = append(items, blamed[name]...)
	}
	return items
}

// resolution reports a successful try: each source at the version it was served at.
func (t *trial) resolution(out outcome) *Resolution {
	r := &Resolution{Engine: out.engine, Served: out.served, Sources: map[string]SourceStatus{}}
	for name, use := range t.use {
		if name == BundlesSource && use == useCurrent {
			continue
		}
		r.Sources[name] = t.status(name, use, nil)
	}
	return r
}

// giveUp reports step 4: the last good versions no longer compile together.
func (t *trial) giveUp(out outcome) *Resolution {
	r := &Resolution{Served: t.last, Sources: map[string]SourceStatus{}}
	var culprits []string
	for name := range out.blamed {
		if name != unattributed {
			culprits = append(culprits, name)
		}
	}
	held := engine.CompileErrorItem{Message: fmt.Sprintf("not in service: the last good versions of the policy sources "+
		"no longer compile together (%s), so the policy set in service stays unchanged", sourceNames(culprits, out.blamed))}
	for name, use := range t.use {
		st := t.status(name, use, &held)
		if use == useCurrent {
			st.Errors = out.blamed[name]
		}
		if name != BundlesSource || len(st.Errors) > 0 {
			r.Sources[name] = st
		}
	}
	return r
}

func (t *trial) status(name string, use version, held *engine.CompileErrorItem) SourceStatus {
	st := SourceStatus{Serving: map[version]string{useCurrent: ServingCurrent, usePrevious: ServingPrevious, useNone: ServingNone}[use]}
	if use == useCurrent {
		return st
	}
	st.Errors = t.errors[name]
	if len(st.Errors) == 0 && held != nil {
		st.Errors = []engine.CompileErrorItem{*held}
	}
	return st
}

// sourceNames says which sources the problems are in, for a person.
func sourceNames(names []string, blamed map[string][]engine.CompileErrorItem) string {
	slices.Sort(names)
	var out []string
	for _, n := range names {
		if n == BundlesSource {
			n = "an OPA bundle"
		} else {
			n = "ConfigMap " + n
		}
		out = append(out, n)
	}
	if _, ok := blamed[unattributed]; ok {
		out = append(out, "the embedded policies")
	}
	return strings.Join(out, ", ")
}
