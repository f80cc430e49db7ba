package pin_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func observed(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "observed", "v1.2.0", name))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, into))
}

func catalog(t *testing.T, name string) *fbc.Catalog {
	t.Helper()
	f, err := os.Open(repo.Path("test", "testdata", "olmv1", name))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	c, err := fbc.Read(f, fbc.DefaultLimits)
	require.NoError(t, err)
	return c
}

// fixtureFacts are what real OLM v1 showed with 1.0.0 installed and settled, and catalog
// revision 2 (1.1.0 and 1.2.0 both successors) served.
func fixtureFacts(t *testing.T, gate *tollgatev1alpha1.ExtensionGate) pin.Facts {
	t.Helper()
	ext := &olmv1.ClusterExtension{}
	observed(t, "25-clusterextension-1.0.0-settled.yaml", ext)
	cat := olmv1.ClusterCatalog{}
	observed(t, "33-clustercatalog-revision-2.yaml", &cat)
	return pin.Facts{
		Extension: input.Extension{Extension: ext, Catalogs: []olmv1.ClusterCatalog{cat}, Gate: gate},
		Content:   map[string]*fbc.Catalog{cat.Name: catalog(t, "catalog-revision-2.jsonl")},
		Now:       now,
	}
}

var (
	embeddedOnce sync.Once
	embedded     *engine.Engine
)

func policies(t *testing.T) *engine.Engine {
	t.Helper()
	embeddedOnce.Do(func() {
		e, err := engine.New(context.Background(), engine.Options{})
		require.NoError(t, err)
		embedded = e
	})
	return embedded
}

// The embedded policies on real OLM v1's objects: the highest successor within the gate's
// range; the installed version while a catalog cannot be read, whatever else is allowed.
func TestDecideOnWhatOLMv1Wrote(t *testing.T) {
	e := policies(t)
	out := pin.Decide(context.Background(), fixtureFacts(t, nil), e)
	assert.Equal(t, "1.0.0", out.Installed)
	assert.Equal(t, "1.2.0", out.Target)
	require.Len(t, out.Versions, 2)
	assert.Equal(t, []string{"1.2.0", "1.1.0"}, []string{out.Versions[0].Version, out.Versions[1].Version})
	assert.True(t, out.Head.Result.Decision.Allowed, "%+v", out.Head.Result.Decision)

	gate := &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Version: "<1.2.0"}}
	out = pin.Decide(context.Background(), fixtureFacts(t, gate), e)
	assert.Equal(t, "1.1.0", out.Target)

	f := fixtureFacts(t, nil)
	f.CatalogErrors = map[string]string{f.Catalogs[0].Name: "GET …/api/v1/all: 503"}
	out = pin.Decide(context.Background(), f, e)
	assert.Equal(t, "1.0.0", out.Target, "nothing moves on content not read")
	assert.Equal(t, "CatalogUnreadable", out.Head.Result.Decision.BlockedBy())

	f = fixtureFacts(t, nil)
	delete(f.Content, f.Catalogs[0].Name)
	out = pin.Decide(context.Background(), f, e)
	assert.Equal(t, "1.0.0", out.Target, "a selected catalog without content is one not read")
}

// A document whose key has a value of another type is refused before evaluation.
func TestMisshapenExtensionDocumentFailsClosed(t *testing.T) {
	f := fixtureFacts(t, nil)
	doc := f.Document(nil, input.Config{}, now)
	require.NoError(t, policies(t).Evaluate(context.Background(), doc).Err)
	for _, k := range []string{"catalogs", "catalogErrors", "operands"} {
		doc := f.Document(nil, input.Config{}, now)
		doc[k] = "x"
		r := policies(t).Evaluate(context.Background(), doc)
		require.ErrorIs(t, r.Err, engine.ErrInputShape, k)
		assert.Contains(t, r.Decision.Denials[0].Message, "extension document version 1")
	}
}

// The invariant, checked by an oracle that does not share pin's grouping: for the pin Decide
// returns, every bundle OLM v1 would install for it (fbc's port of OLM v1's resolver, asked
// with the pin as an exact version, in every catalog) was judged and allowed; and no catalog
// was unread. Random catalogs (several, with the same versions under other bundles), random
// upgrade edges, random decisions.
func TestDecideOracle(t *testing.T) {
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 7))
		f, allow := randomWorld(rng)
		ev := &recorder{allow: allow, seen: map[string]bool{}}
		out := pin.Decide(context.Background(), f, ev)
		checkInvariant(t, seed, f, ev, out)
	}
}

func checkInvariant(t *testing.T, seed uint64, f pin.Facts, ev *recorder, out pin.Outcome) {
	t.Helper()
	in := f.Extension.Extension.Status.Install.Bundle
	if out.Target == out.Installed {
		return
	}
	require.Empty(t, f.CatalogErrors, "seed %d: pin moved to %s with a catalog unread", seed, out.Target)
	src := f.Extension.Extension.Spec.Source.Catalog
	installable := 0
	for name, content := range f.Content {
		pkg := content.Packages[src.PackageName]
		if pkg == nil {
			continue
		}
		cands, err := pkg.Candidates(fbc.Query{Version: out.Target, Channels: src.Channels, Installed: &fbc.Installed{Name: in.Name, Version: in.Version}})
		require.NoError(t, err)
		for _, c := range cands {
			installable++
			key := name + "/" + c.Name
			require.True(t, ev.seen[key], "seed %d: OLM v1 could install %s for pin %s, which the policies never saw", seed, key, out.Target)
			require.True(t, ev.allow[key], "seed %d: OLM v1 could install %s for pin %s, which the policies did not allow", seed, key, out.Target)
		}
	}
	require.Positive(t, installable, "seed %d: pin %s is installable", seed, out.Target)
}

// recorder allows the bundles of allow ("catalog/bundle") and records what it was asked.
type recorder struct {
	allow map[string]bool
	mu    sync.Mutex
	seen  map[string]bool
}

func (r *recorder) Evaluate(_ context.Context, doc map[string]any) *engine.Result {
	c, _ := doc["candidate"].(map[string]any)
	if c == nil {
		return &engine.Result{Decision: engine.Decision{Allowed: true}}
	}
	key := fmt.Sprint(c["catalog"], "/", c["name"])
	r.mu.Lock()
	r.seen[key] = true
	r.mu.Unlock()
	res := &engine.Result{Decision: engine.Decision{Allowed: r.allow[key]}}
	if !res.Decision.Allowed {
		res.Decision.Denials = []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: "Random", Message: "held"}}}
	}
	return res
}

// randomWorld is an extension of package p installed at some version, with one to three
// catalogs of random versions, channels and edges, and a random set of allowed bundles.
func randomWorld(rng *rand.Rand) (pin.Facts, map[string]bool) {
	allow := map[string]bool{}
	content := map[string]*fbc.Catalog{}
	var catalogs []olmv1.ClusterCatalog
	for i := range 1 + rng.IntN(3) {
		name := fmt.Sprintf("cat%d", i)
		catalogs = append(catalogs, olmv1.ClusterCatalog{})
		catalogs[i].Name = name
		content[name] = randomCatalog(rng, name, allow)
	}
	installed := 1 + rng.IntN(3)
	ext := &olmv1.ClusterExtension{}
	ext.Name = "p"
	ext.Spec.Source.Catalog = &olmv1.CatalogFilter{PackageName: "p", Version: fmt.Sprintf("1.%d.0", installed)}
	if rng.IntN(2) == 0 {
		ext.Spec.Source.Catalog.Channels = []string{"stable"}
	}
	ext.Status.Install = &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: fmt.Sprintf("p.v1.%d.0", installed), Version: fmt.Sprintf("1.%d.0", installed)}}
	f := pin.Facts{Extension: input.Extension{Extension: ext, Catalogs: catalogs}, Content: content, Now: now}
	if rng.IntN(8) == 0 {
		f.CatalogErrors = map[string]string{"cat0": "unreadable"}
	}
	if rng.IntN(4) == 0 {
		f.Gate = &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Version: fmt.Sprintf("<1.%d.0", 2+rng.IntN(6))}}
	}
	return f, allow
}

// randomCatalog has versions 1.0.0 … 1.7.0 (some missing), a bundle of a version named either
// p.v<version> or, as another catalog may, p-alt.v<version>, in channels stable and fast with
// random replaces, skips and skipRange edges.
func randomCatalog(rng *rand.Rand, name string, allow map[string]bool) *fbc.Catalog {
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	add(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}`)
	var bundles []string
	for v := range 8 {
		if v > 0 && rng.IntN(4) == 0 {
			continue
		}
		b := fmt.Sprintf("p.v1.%d.0", v)
		if rng.IntN(5) == 0 {
			b = fmt.Sprintf("p-alt.v1.%d.0", v)
		}
		bundles = append(bundles, b)
		allow[name+"/"+b] = rng.IntN(3) > 0
		add(fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"p","image":"r/%s","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.%d.0"}}]}`, b, b, v))
	}
	for _, ch := range []string{"stable", "fast"} {
		var entries []string
		for i, b := range bundles {
			if rng.IntN(4) == 0 {
				continue
			}
			e := fmt.Sprintf(`{"name":%q`, b)
			if i > 0 && rng.IntN(2) == 0 {
				e += fmt.Sprintf(`,"replaces":%q`, bundles[rng.IntN(i)])
			}
			if i > 0 && rng.IntN(3) == 0 {
				e += fmt.Sprintf(`,"skips":[%q]`, bundles[rng.IntN(i)])
			}
			if rng.IntN(3) == 0 {
				e += fmt.Sprintf(`,"skipRange":">=1.0.0 <1.%d.0"`, rng.IntN(8))
			}
			entries = append(entries, e+"}")
		}
		add(fmt.Sprintf(`{"schema":"olm.channel","package":"p","name":%q,"entries":[%s]}`, ch, strings.Join(entries, ",")))
	}
	c, err := fbc.Read(strings.NewReader(strings.Join(lines, "\n")), fbc.DefaultLimits)
	if err != nil {
		panic(err)
	}
	return c
}

// An empty channel list and a gate's channels: only versions with a bundle in the gate's
// channels are followed.
func TestGateChannelsRestrictWhatIsFollowed(t *testing.T) {
	gate := &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Channels: []string{"candidate"}}}
	out := pin.Decide(context.Background(), fixtureFacts(t, gate), policies(t))
	assert.Equal(t, "1.0.0", out.Target, "the fixture has no channel candidate")
	assert.Empty(t, out.Versions)
	assert.False(t, slices.ContainsFunc(out.Versions, func(v pin.Version) bool { return v.Allowed }))
}

// A gate whose range does not parse follows nothing, and says why.
func TestInvalidGateRangeFollowsNothing(t *testing.T) {
	gate := &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Version: ">=1.0.0 <<2"}}
	out := pin.Decide(context.Background(), fixtureFacts(t, gate), policies(t))
	assert.Equal(t, "1.0.0", out.Target)
	assert.Empty(t, out.Versions)
	assert.Contains(t, out.GateError, `spec.version ">=1.0.0 <<2" is not a version range`)
}
