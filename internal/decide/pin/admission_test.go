package pin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// cat is one ClusterCatalog of a world and its content (catalog lines of package p).
type cat struct {
	name     string
	priority int32
	mode     string
	lines    []string
}

// b is an olm.bundle line of package p named name at version v.
func b(name, v string, props ...string) string {
	return fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"p","image":"r/%s","properties":[{"type":"olm.package","value":{"packageName":"p","version":%q}}%s]}`,
		name, name, v, strings.Join(append([]string{""}, props...), ","))
}

// ch is an olm.channel line of package p: entries "name" or "name<replaced".
func ch(name string, entries ...string) string {
	var es []string
	for _, e := range entries {
		n, replaces, _ := strings.Cut(e, "<")
		es = append(es, fmt.Sprintf(`{"name":%q,"replaces":%q}`, n, replaces))
	}
	return fmt.Sprintf(`{"schema":"olm.channel","package":"p","name":%q,"entries":[%s]}`, name, strings.Join(es, ","))
}

// dep is an olm.deprecations line of package p deprecating the bundles named.
func dep(bundles ...string) string {
	var es []string
	for _, n := range bundles {
		es = append(es, fmt.Sprintf(`{"reference":{"schema":"olm.bundle","name":%q},"message":"deprecated"}`, n))
	}
	return `{"schema":"olm.deprecations","package":"p","entries":[` + strings.Join(es, ",") + `]}`
}

// world are the facts of extension p installed as installed (name@version), pinned at pin,
// over cats.
func world(t *testing.T, installed, pinned string, cats ...cat) pin.Facts {
	t.Helper()
	name, version, _ := strings.Cut(installed, "@")
	ext := &olmv1.ClusterExtension{}
	ext.Name = "p"
	ext.Spec.Source.Catalog = &olmv1.CatalogFilter{PackageName: "p", Version: pinned}
	ext.Status.Install = &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: name, Version: version}}
	f := pin.Facts{Extension: input.Extension{Extension: ext, CatalogErrors: map[string]string{}}, Content: map[string]*fbc.Catalog{}, Now: now}
	for _, c := range cats {
		cc := olmv1.ClusterCatalog{}
		cc.Name, cc.Spec.Priority, cc.Spec.AvailabilityMode = c.name, c.priority, c.mode
		f.Catalogs = append(f.Catalogs, cc)
		if c.mode != olmv1.AvailabilityModeUnavailable {
			content, err := fbc.Read(strings.NewReader(strings.Join(c.lines, "\n")), fbc.DefaultLimits)
			require.NoError(t, err)
			f.Content[c.name] = content
		}
	}
	return f
}

// allowing is an evaluator allowing every bundle but those denied ("catalog/bundle").
func allowing(denied ...string) *recorder {
	r := &recorder{allow: map[string]bool{}, seen: map[string]bool{}}
	r.deny = denied
	return r
}

func judgedNames(js []pin.Judged) []string {
	out := []string{}
	for _, j := range js {
		out = append(out, j.Candidate.Catalog+"/"+j.Candidate.Bundle.Name)
	}
	return out
}

// Each case is one way a pin admitted, on the code before, a bundle the policies denied or
// never saw, or held what OLM v1 would not take; a world shows it and the outcome says what
// holds it.
func TestAPinAdmitsOnlyWhatWasJudged(t *testing.T) {
	ctx := context.Background()
	t.Run("a held pin judges the installed version's other bundles, and a denied one is unexcludable, not held", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{
			ch("stable", "p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p-rebuilt.v1.0.0", "1.0.0"), dep("p.v1.0.0")}})
		ev := allowing("a/p-rebuilt.v1.0.0")
		out := pin.Decide(ctx, f, ev)
		assert.Equal(t, "1.0.0", out.Target)
		assert.Equal(t, []string{"a/p-rebuilt.v1.0.0"}, judgedNames(out.Unexcludable))
		assert.Equal(t, "a/p-rebuilt.v1.0.0", judgedNames([]pin.Judged{out.Head})[0])
	})
	t.Run("a bundle of the installed version held only because OLM v1 is not settled is not unexcludable", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{b("p.v1.0.0", "1.0.0"), b("p.v1.0.0+1", "1.0.0+1")}})
		ev := allowing("a/p.v1.0.0+1")
		ev.code = "ExtensionProgressing"
		assert.Empty(t, pin.Decide(ctx, f, ev).Unexcludable)
	})
	t.Run("a same-version bundle of a higher-priority catalog is judged at the held pin", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{b("p.v1.0.0", "1.0.0")}},
			cat{name: "b", priority: 5, lines: []string{b("p.v1.0.0", "1.0.0+vendor")}})
		out := pin.Decide(ctx, f, allowing("b/p.v1.0.0"))
		assert.Equal(t, []string{"b/p.v1.0.0"}, judgedNames(out.Unexcludable))
	})
	t.Run("an allowed successor excludes a denied sibling of the installed version", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{
			ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.0.0+1", "1.0.0+1"), b("p.v1.1.0", "1.1.0")}})
		out := pin.Decide(ctx, f, allowing("a/p.v1.0.0+1"))
		assert.Equal(t, "1.1.0", out.Target)
		assert.Empty(t, out.Unexcludable)
	})
	t.Run("build metadata: a pin on 1.1.0 admits every build of it, all judged", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{
			ch("stable", "p.v1.0.0", "p.v1.1.0+1<p.v1.0.0", "p.v1.1.0+2<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0+1", "1.1.0+1"), b("p.v1.1.0+2", "1.1.0+2")}})
		out := pin.Decide(ctx, f, allowing("a/p.v1.1.0+1"))
		assert.Equal(t, "1.0.0", out.Target)
		require.Len(t, out.Versions, 1)
		assert.Equal(t, "1.1.0", out.Versions[0].Version)
		assert.ElementsMatch(t, []string{"a/p.v1.1.0+1", "a/p.v1.1.0+2"}, judgedNames(out.Versions[0].Bundles))
		out = pin.Decide(ctx, f, allowing())
		assert.Equal(t, "1.1.0", out.Target, "the pin carries no build metadata: OLM v1 ignores it")
	})
	t.Run("a denied bundle of a lower-priority catalog does not hold what OLM v1 takes from the higher", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0",
			cat{name: "a", priority: 10, lines: []string{ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0")}},
			cat{name: "b", lines: []string{ch("stable", "p.v1.0.0", "q.v1.1.0<p.v1.0.0"), b("q.v1.1.0", "1.1.0")}})
		out := pin.Decide(ctx, f, allowing("b/q.v1.1.0"))
		assert.Equal(t, "1.1.0", out.Target)
	})
	t.Run("two catalogs of the same priority serving a version: OLM v1 refuses it, so no pin goes there", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0",
			cat{name: "a", lines: []string{ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0")}},
			cat{name: "b", lines: []string{ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.1.0", "1.1.0")}})
		out := pin.Decide(ctx, f, allowing())
		assert.Equal(t, "1.0.0", out.Target)
		require.Len(t, out.Refused, 1)
		assert.Equal(t, []string{"a", "b"}, out.Refused[0].Ambiguous)
	})
	t.Run("an Unavailable catalog neither serves nor holds", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0",
			cat{name: "a", lines: []string{ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0")}},
			cat{name: "off", mode: olmv1.AvailabilityModeUnavailable})
		out := pin.Decide(ctx, f, allowing())
		assert.Equal(t, "1.1.0", out.Target)
		assert.Empty(t, f.CatalogErrors)
	})
	t.Run("SelfCertified never pins below the installed version", func(t *testing.T) {
		f := world(t, "p.v1.2.0@1.2.0", "1.2.0", cat{name: "a", lines: []string{b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0"), b("p.v1.2.0", "1.2.0")}})
		f.Extension.Extension.Spec.Source.Catalog.UpgradeConstraintPolicy = olmv1.UpgradeConstraintPolicySelfCertified
		out := pin.Decide(ctx, f, allowing("a/p.v1.2.0"))
		assert.Equal(t, "1.2.0", out.Target)
		assert.Empty(t, out.Versions)
	})
	t.Run("gate channels follow upgrade edges, not membership", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{
			ch("stable", "p.v1.0.0", "p.v1.1.0"), ch("fast", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0")}})
		f.Gate = &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Channels: []string{"stable"}}}
		out := pin.Decide(ctx, f, allowing())
		assert.Equal(t, "1.0.0", out.Target, "1.1.0 is in stable, but its edge from 1.0.0 only in fast")
		f.Gate.Spec.Channels = []string{"fast"}
		assert.Equal(t, "1.1.0", pin.Decide(ctx, f, allowing()).Target)
	})
	t.Run("a gate whose channels the extension does not select says so", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: []string{b("p.v1.0.0", "1.0.0")}})
		f.Extension.Extension.Spec.Source.Catalog.Channels = []string{"stable"}
		f.Gate = &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Channels: []string{"fast"}}}
		assert.Contains(t, pin.Decide(ctx, f, allowing()).GateError, "spec.channels [fast] has no channel of the ClusterExtension's spec.source.catalog.channels [stable]")
	})
	t.Run("forty denied successors do not hide the allowed one below them", func(t *testing.T) {
		lines := []string{b("p.v1.0.0", "1.0.0")}
		var denied []string
		for i := 1; i <= 41; i++ {
			n := fmt.Sprintf("p.v1.%d.0", i)
			lines = append(lines, b(n, fmt.Sprintf("1.%d.0", i)), ch(fmt.Sprintf("c%d", i), "p.v1.0.0", n+"<p.v1.0.0"))
			if i > 1 {
				denied = append(denied, "a/"+n)
			}
		}
		out := pin.Decide(ctx, world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: lines}), allowing(denied...))
		assert.Equal(t, "1.1.0", out.Target)
		assert.Len(t, out.Versions, 41)
		assert.Zero(t, out.Undecided)
	})
	t.Run("past MaxJudged bundles the versions left are counted, not passed over", func(t *testing.T) {
		lines := []string{b("p.v1.0.0", "1.0.0")}
		for i := 1; i <= pin.MaxJudged+10; i++ {
			n := fmt.Sprintf("p.v1.%d.0", i)
			lines = append(lines, b(n, fmt.Sprintf("1.%d.0", i)), ch(fmt.Sprintf("c%d", i), "p.v1.0.0", n+"<p.v1.0.0"))
		}
		out := pin.Decide(ctx, world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: lines}), allowing("a/never"))
		assert.Equal(t, "1.266.0", out.Target, "the highest, allowed, is the first decided")
		ev := allowing()
		ev.allow = map[string]bool{"a/p.v1.1.0": true}
		out = pin.Decide(ctx, world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: lines}), ev)
		assert.Equal(t, "1.0.0", out.Target)
		assert.Len(t, out.Versions, pin.MaxJudged)
		assert.Equal(t, 10, out.Undecided, "1.10.0 … 1.1.0 are counted as undecided")
	})
	t.Run("a malformed object of another package does not hold; one of the gated package does", func(t *testing.T) {
		lines := []string{ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0"), `{"schema":"olm.channel","package":"other","name":"x","entries":"x"}`, `{"schema":"olm.bundle","name":"stray"}`}
		f := world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: lines})
		assert.Equal(t, "1.1.0", pin.Decide(ctx, f, allowing()).Target)
		f = world(t, "p.v1.0.0@1.0.0", "1.0.0", cat{name: "a", lines: append(lines, `{"schema":"olm.channel","package":"p","name":"x","entries":"x"}`)})
		out := pin.Decide(ctx, f, allowing())
		assert.Equal(t, "1.0.0", out.Target)
		assert.Contains(t, f.CatalogErrors["a"], "OLM v1 cannot load package p from it")
	})
	t.Run("the current pin, not yet installed, is decided again", func(t *testing.T) {
		f := world(t, "p.v1.0.0@1.0.0", "1.1.0", cat{name: "a", lines: []string{
			ch("stable", "p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.0.0"), b("p.v1.0.0", "1.0.0"), b("p.v1.1.0", "1.1.0"), b("p.v1.2.0", "1.2.0")}})
		out := pin.Decide(ctx, f, allowing("a/p.v1.1.0", "a/p.v1.2.0"))
		require.NotNil(t, out.Pinned)
		assert.Equal(t, []string{"a/p.v1.1.0"}, judgedNames(out.Pinned.Bundles))
		assert.Equal(t, "1.1.0", out.Pinned.Version)
		assert.False(t, out.Pinned.Allowed)
		assert.Equal(t, "1.0.0", out.Target)
		f.Gate = &tollgatev1alpha1.ExtensionGate{Spec: tollgatev1alpha1.ExtensionGateSpec{Version: ">=1.2.0"}}
		out = pin.Decide(ctx, f, allowing("a/p.v1.1.0"))
		require.NotNil(t, out.Pinned, "decided outside the gate's range too")
		assert.False(t, out.Pinned.Allowed)
		assert.Equal(t, "1.2.0", out.Target)
	})
}
