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

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"
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
	require.Len(t, out.Versions, 1, "the highest allowed version ends the search")
	assert.Equal(t, "1.2.0", out.Versions[0].Version)
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

// The invariant, checked with fbc.Admit as the oracle of what OLM v1 could install: the pin
// Decide returns, when it moves, admits only bundles that were judged and allowed, on content
// all read; at the installed version every denied bundle it admits is reported unexcludable;
// SelfCertified never goes below the installed version; and no higher version the gate's range
// allows was allowed whole and passed over. Random catalogs (several, priorities, Unavailable
// ones, the same versions under other bundles and builds, deprecations), random upgrade edges,
// random decisions.
func TestDecideOracle(t *testing.T) {
	for seed := range uint64(1000) {
		rng := rand.New(rand.NewPCG(seed, 7))
		f, allow, _ := randomWorld(rng)
		ev := &recorder{allow: allow, seen: map[string]bool{}}
		out := pin.Decide(context.Background(), f, ev)
		checkInvariant(t, seed, f, ev, out)
	}
}

func checkInvariant(t *testing.T, seed uint64, f pin.Facts, ev *recorder, out pin.Outcome) {
	t.Helper()
	in := f.Extension.Extension.Status.Install.Bundle
	src := f.Extension.Extension.Spec.Source.Catalog
	admit := func(v string) fbc.Admission {
		var offers []fbc.Offer
		for _, c := range f.Catalogs {
			if c.Spec.AvailabilityMode != olmv1.AvailabilityModeUnavailable && f.Content[c.Name] != nil {
				offers = append(offers, fbc.Offer{Catalog: c.Name, Priority: c.Spec.Priority, Package: f.Content[c.Name].Packages["p"]})
			}
		}
		a, err := fbc.Admit(offers, fbc.Query{Version: v, Channels: src.Channels, Installed: &fbc.Installed{Name: in.Name, Version: in.Version},
			SelfCertified: src.UpgradeConstraintPolicy == olmv1.UpgradeConstraintPolicySelfCertified})
		require.NoError(t, err)
		return a
	}
	allowedWhole := func(a fbc.Admission) bool {
		return len(a.Bundles) > 0 && !slices.ContainsFunc(a.Bundles, func(b fbc.Admitted) bool { return !ev.allow[b.Catalog+"/"+b.Name] })
	}
	if out.Target == out.Installed {
		unexcludable := judgedNames(out.Unexcludable)
		for _, b := range admit(out.Installed).Bundles {
			if key := b.Catalog + "/" + b.Name; !ev.allow[key] && b.Name != in.Name {
				require.Contains(t, unexcludable, key, "seed %d: held at %s, which admits %s, denied", seed, out.Installed, key)
			}
		}
	} else {
		require.Empty(t, f.CatalogErrors, "seed %d: pin moved to %s with a catalog unread", seed, out.Target)
		a := admit(out.Target)
		require.NotEmpty(t, a.Bundles, "seed %d: pin %s is installable", seed, out.Target)
		for _, b := range a.Bundles {
			key := b.Catalog + "/" + b.Name
			require.True(t, ev.seen[key], "seed %d: OLM v1 could install %s for pin %s, which the policies never saw", seed, key, out.Target)
			require.True(t, ev.allow[key], "seed %d: OLM v1 could install %s for pin %s, which the policies did not allow", seed, key, out.Target)
		}
	}
	target, installed := bsemver.MustParse(out.Target), bsemver.MustParse(out.Installed)
	require.False(t, target.LT(installed) && src.UpgradeConstraintPolicy == olmv1.UpgradeConstraintPolicySelfCertified, "seed %d: SelfCertified pinned %s below %s", seed, out.Target, out.Installed)
	if len(f.CatalogErrors) > 0 || out.Undecided > 0 {
		return
	}
	for v := range 8 {
		ver := fmt.Sprintf("1.%d.0", v)
		if bsemver.MustParse(ver).GT(target) && bsemver.MustParse(ver).GT(installed) && gateAllows(f, ver) {
			require.False(t, allowedWhole(admit(ver)), "seed %d: %s is allowed whole, above the pin %s", seed, ver, out.Target)
		}
	}
}

// gateAllows says whether the gate's range allows v.
func gateAllows(f pin.Facts, v string) bool {
	if f.Gate == nil || f.Gate.Spec.Version == "" {
		return true
	}
	c, err := mmsemver.NewConstraint(f.Gate.Spec.Version)
	return err == nil && c.Check(mmsemver.MustParse(v))
}

// recorder allows the bundles of allow ("catalog/bundle"), or, with deny set, every bundle but
// those, and records what it was asked.
type recorder struct {
	allow map[string]bool
	deny  []string
	// code is the denials' code; "" means Random.
	code string
	mu   sync.Mutex
	seen map[string]bool
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
	allowed := r.allow[key]
	if r.deny != nil || len(r.allow) == 0 {
		allowed = !slices.Contains(r.deny, key)
	}
	res := &engine.Result{Decision: engine.Decision{Allowed: allowed}}
	if !res.Decision.Allowed {
		code := r.code
		if code == "" {
			code = "Random"
		}
		res.Decision.Denials = []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: code, Message: "held"}}}
	}
	return res
}

// randomWorld is an extension of package p installed at some version (CatalogProvided or
// SelfCertified), with one to three catalogs of random priorities (one maybe Unavailable), of
// random versions, builds, channels, edges and deprecations, and a random set of allowed
// bundles; and each catalog's content as catalogd serves it.
func randomWorld(rng *rand.Rand) (pin.Facts, map[string]bool, map[string]string) {
	allow := map[string]bool{}
	content := map[string]*fbc.Catalog{}
	raw := map[string]string{}
	var catalogs []olmv1.ClusterCatalog
	for i := range 1 + rng.IntN(3) {
		name := fmt.Sprintf("cat%d", i)
		catalogs = append(catalogs, olmv1.ClusterCatalog{})
		catalogs[i].Name = name
		catalogs[i].Spec.Priority = int32(rng.IntN(3))
		if i > 0 && rng.IntN(6) == 0 {
			catalogs[i].Spec.AvailabilityMode = olmv1.AvailabilityModeUnavailable
			continue
		}
		content[name], raw[name] = randomCatalog(rng, name, allow)
	}
	installed := 1 + rng.IntN(3)
	ext := &olmv1.ClusterExtension{}
	ext.Name = "p"
	ext.Spec.Source.Catalog = &olmv1.CatalogFilter{PackageName: "p", Version: fmt.Sprintf("1.%d.0", installed)}
	if rng.IntN(2) == 0 {
		ext.Spec.Source.Catalog.Channels = []string{"stable"}
	}
	if rng.IntN(4) == 0 {
		ext.Spec.Source.Catalog.UpgradeConstraintPolicy = olmv1.UpgradeConstraintPolicySelfCertified
	}
	ext.Status.Install = &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: fmt.Sprintf("p.v1.%d.0", installed), Version: fmt.Sprintf("1.%d.0", installed)}}
	f := pin.Facts{Extension: input.Extension{Extension: ext, Catalogs: catalogs, CatalogErrors: map[string]string{}}, Content: content, Now: now}
	if rng.IntN(8) == 0 {
		f.CatalogErrors["cat0"] = "unreadable"
	}
	if rng.IntN(4) == 0 {
		f.Gate = &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Version: fmt.Sprintf("<1.%d.0", 2+rng.IntN(6))}}
	}
	return f, allow, raw
}

// randomCatalog has versions 1.0.0 … 1.7.0 (some missing), each with a bundle named
// p.v<version> or p-alt.v<version>, sometimes a second build of it (p.v<version>+1), in
// channels stable and fast with random replaces, skips and skipRange edges, and some bundles
// deprecated.
func randomCatalog(rng *rand.Rand, name string, allow map[string]bool) (*fbc.Catalog, string) {
	var lines, bundles, deprecated []string
	add := func(s string) { lines = append(lines, s) }
	add(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}`)
	bundle := func(b, v string) {
		bundles = append(bundles, b)
		allow[name+"/"+b] = rng.IntN(3) > 0
		if rng.IntN(6) == 0 {
			deprecated = append(deprecated, fmt.Sprintf(`{"reference":{"schema":"olm.bundle","name":%q},"message":"old"}`, b))
		}
		add(fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"p","image":"r/%s","properties":[{"type":"olm.package","value":{"packageName":"p","version":%q}}]}`, b, b, v))
	}
	for v := range 8 {
		if v > 0 && rng.IntN(4) == 0 {
			continue
		}
		b := fmt.Sprintf("p.v1.%d.0", v)
		if rng.IntN(5) == 0 {
			b = fmt.Sprintf("p-alt.v1.%d.0", v)
		}
		bundle(b, fmt.Sprintf("1.%d.0", v))
		if rng.IntN(5) == 0 {
			bundle(fmt.Sprintf("p.v1.%d.0+1", v), fmt.Sprintf("1.%d.0+1", v))
		}
	}
	for _, ch := range []string{"stable", "fast"} {
		add(randomChannel(rng, ch, bundles))
	}
	if len(deprecated) > 0 {
		add(`{"schema":"olm.deprecations","package":"p","entries":[` + strings.Join(deprecated, ",") + `]}`)
	}
	raw := strings.Join(lines, "\n")
	c, err := fbc.Read(strings.NewReader(raw), fbc.DefaultLimits)
	if err != nil {
		panic(err)
	}
	return c, raw
}

// randomChannel is channel ch of package p with some of bundles, and random edges between them.
func randomChannel(rng *rand.Rand, ch string, bundles []string) string {
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
	return fmt.Sprintf(`{"schema":"olm.channel","package":"p","name":%q,"entries":[%s]}`, ch, strings.Join(entries, ","))
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
