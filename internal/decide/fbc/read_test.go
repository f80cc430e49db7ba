package fbc_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
)

// bundle is an olm.bundle line of package test-package at version v.
func bundle(v string) string {
	return `{"schema":"olm.bundle","name":"test-package.v` + v + `","package":"test-package","image":"registry.io/repo/test-package@v` + v +
		`","properties":[{"type":"olm.package","value":{"packageName":"test-package","version":"` + v + `"}}]}`
}

// edges is the channel of operator-controller's own successor tests
// (catalogmetadata/filter/successors_test.go), with a bundle for each entry.
var edges = strings.Join([]string{
	`{"schema":"olm.package","name":"test-package","defaultChannel":"stable"}`,
	`{"schema":"olm.channel","name":"stable","package":"test-package","entries":[` +
		`{"name":"test-package.v2.0.0"},` +
		`{"name":"test-package.v2.1.0","replaces":"test-package.v2.0.0"},` +
		`{"name":"test-package.v2.2.0","replaces":"test-package.v2.1.0"},` +
		`{"name":"test-package.v2.2.1"},` +
		`{"name":"test-package.v2.3.0","replaces":"test-package.v2.2.0","skips":["test-package.v2.2.1"]},` +
		`{"name":"test-package.v2.4.0","skipRange":">=2.3.0 <2.4.0"}]}`,
	bundle("2.0.0"), bundle("2.1.0"), bundle("2.2.0"), bundle("2.2.1"), bundle("2.3.0"), bundle("2.4.0"),
}, "\n")

func read(t *testing.T, content string) *fbc.Package {
	t.Helper()
	c, err := fbc.Read(strings.NewReader(content), fbc.DefaultLimits)
	require.NoError(t, err)
	return c.Packages["test-package"]
}

// TestSuccessorsAsOperatorController: the cases of operator-controller's TestSuccessorsPredicate.
func TestSuccessorsAsOperatorController(t *testing.T) {
	p := read(t, edges)
	for _, tc := range []struct {
		name, installed string
		want            []string
	}{
		{"replaces", "2.0.0", []string{"test-package.v2.1.0", "test-package.v2.0.0"}},
		{"skips", "2.2.1", []string{"test-package.v2.3.0", "test-package.v2.2.1"}},
		{"skipRange", "2.3.0", []string{"test-package.v2.4.0", "test-package.v2.3.0"}},
		{"installed bundle not in the catalog", "9.0.0", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Candidates(fbc.Query{Installed: &fbc.Installed{Name: "test-package.v" + tc.installed, Version: tc.installed}})
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(got))
		})
	}
}

func TestChannelsRestrictBundlesAndEdges(t *testing.T) {
	p := read(t, strings.Join([]string{
		`{"schema":"olm.channel","name":"stable","package":"test-package","entries":[{"name":"test-package.v1.0.0"},{"name":"test-package.v1.1.0","replaces":"test-package.v1.0.0"}]}`,
		`{"schema":"olm.channel","name":"fast","package":"test-package","entries":[{"name":"test-package.v1.0.0"},{"name":"test-package.v2.0.0","replaces":"test-package.v1.0.0"}]}`,
		bundle("1.0.0"), bundle("1.1.0"), bundle("2.0.0"),
	}, "\n"))
	from := &fbc.Installed{Name: "test-package.v1.0.0", Version: "1.0.0"}
	got, err := p.Candidates(fbc.Query{Installed: from, Channels: []string{"stable"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"test-package.v1.1.0", "test-package.v1.0.0"}, names(got))
	got, err = p.Candidates(fbc.Query{Installed: from})
	require.NoError(t, err)
	assert.Equal(t, []string{"test-package.v2.0.0", "test-package.v1.1.0", "test-package.v1.0.0"}, names(got))
}

func TestDeprecatedBundlesRankLast(t *testing.T) {
	p := read(t, edges+"\n"+`{"schema":"olm.deprecations","package":"test-package","entries":[`+
		`{"reference":{"schema":"olm.bundle","name":"test-package.v2.4.0"},"message":"use 2.3.0"},`+
		`{"reference":{"schema":"olm.package"},"message":"the package is moving"}]}`)
	got, err := p.Candidates(fbc.Query{Version: ">=2.2.0"})
	require.NoError(t, err)
	assert.Equal(t, []string{"test-package.v2.3.0", "test-package.v2.2.1", "test-package.v2.2.0", "test-package.v2.4.0"}, names(got))
	assert.True(t, got[3].Deprecated)
	assert.Equal(t, []fbc.Deprecation{
		{Schema: "olm.bundle", Name: "test-package.v2.4.0", Message: "use 2.3.0"},
		{Schema: "olm.package", Message: "the package is moving"},
	}, p.Deprecations)
}

func TestABundleWithoutAVersionIsNoCandidate(t *testing.T) {
	p := read(t, `{"schema":"olm.bundle","name":"test-package.v1","package":"test-package","image":"x"}`+"\n"+bundle("1.0.0"))
	got, err := p.Candidates(fbc.Query{})
	require.NoError(t, err)
	assert.Equal(t, []string{"test-package.v1.0.0"}, names(got))
}

func TestBundleObjectsAreNotKept(t *testing.T) {
	p := read(t, `{"schema":"olm.bundle","name":"a","package":"test-package","image":"x","properties":[`+
		`{"type":"olm.bundle.object","value":{"data":"`+base64.StdEncoding.EncodeToString([]byte(`{"kind":"ConfigMap","data":{"a":"`+strings.Repeat("A", 1000)+`"}}`))+`"}},{"type":"olm.package","value":{"packageName":"test-package","version":"1.0.0"}}]}`)
	require.Len(t, p.Bundles, 1)
	require.Len(t, p.Bundles[0].Properties, 1)
	assert.Equal(t, fbc.PropertyPackage, p.Bundles[0].Properties[0].Type)
}

func TestMalformedQueriesAreErrors(t *testing.T) {
	p := read(t, edges)
	_, err := p.Candidates(fbc.Query{Version: ">=banana"})
	assert.ErrorContains(t, err, `version range ">=banana"`)
	_, err = p.Candidates(fbc.Query{Installed: &fbc.Installed{Name: "test-package.vX", Version: "X"}})
	assert.ErrorContains(t, err, `installed bundle "test-package.vX": version "X"`)
}

// TestHostileContentIsRefusedWhole: content OLM v1's cache cannot read at all, or larger than
// the limits, is an error naming the line, and no catalog.
func TestHostileContentIsRefusedWhole(t *testing.T) {
	small := fbc.Limits{MaxBytes: 4096, MaxObjectBytes: 1024}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", edges + "\n<html>", "line 9: not a catalog object"},
		{"a name that is not a string", `{"schema":"olm.bundle","name":7,"package":"p"}`, `line 1: the value of "name" is not a string`},
		{"a null package", `{"schema":"olm.bundle","name":"x","package":null}`, `line 1: the value of "package" is not a string`},
		{"keys equal but for case", `{"schema":"olm.bundle","name":"x","package":"p","Image":"a","image":"b"}`, "line 1: duplicate keys"},
		{"one object over its limit", `{"schema":"olm.package","name":"` + strings.Repeat("x", 2000) + `"}`, "line 1 is longer than 1024 bytes"},
		{"content over its limit", strings.Repeat(bundle("1.0.0")+"\n", 40), "more than 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := fbc.Read(strings.NewReader(tc.content), small)
			assert.Nil(t, c)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestMalformedObjectsStayInTheirPackage: as OLM v1's cache files each object under its
// package, an object it cannot load fails that package only, and one without a package fails
// nothing.
func TestMalformedObjectsStayInTheirPackage(t *testing.T) {
	for _, tc := range []struct {
		name, object, malformed string
	}{
		{"an object without a schema", `{"package":"test-package","name":"x"}`, "an object without a schema"},
		{"malformed deprecations", `{"schema":"olm.deprecations","package":"test-package","entries":{}}`, `olm.deprecations of package "test-package": json: cannot unmarshal`},
		{"a channel whose entries are not a list", `{"schema":"olm.channel","package":"test-package","name":"c","entries":"x"}`, `olm.channel "c"`},
		{"a bundle object that is not base64", `{"schema":"olm.bundle","package":"test-package","name":"b","properties":[{"type":"olm.bundle.object","value":{"data":"%%%"}}]}`, "property 0 is not a bundle object"},
		{"related images of the wrong shape", `{"schema":"olm.bundle","package":"test-package","name":"b","relatedImages":"x"}`, `olm.bundle "b"`},
		{"an icon that is not base64", `{"schema":"olm.package","name":"test-package","icon":{"base64data":"%%%"}}`, `olm.package "test-package"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := fbc.Read(strings.NewReader(edges+"\n"+tc.object+"\n"+`{"schema":"olm.bundle","name":"o.v1.0.0","package":"other","image":"x"}`), fbc.DefaultLimits)
			require.NoError(t, err)
			p := c.Packages["test-package"]
			require.Len(t, p.Malformed, 1)
			assert.Contains(t, p.Malformed[0], tc.malformed)
			assert.Empty(t, c.Packages["other"].Malformed, "another package is read whole")
			assert.Len(t, c.Packages["other"].Bundles, 1)
		})
	}
	for _, stray := range []string{`{"schema":"olm.bundle","name":"x"}`, `{"schema":"olm.package"}`, `{"schema":"olm.channel","name":"c","entries":"x"}`} {
		c, err := fbc.Read(strings.NewReader(edges+"\n"+stray), fbc.DefaultLimits)
		require.NoError(t, err, stray)
		assert.Empty(t, c.Packages["test-package"].Malformed, stray)
		assert.Len(t, c.Packages, 1, stray)
	}
}

// TestTheLastObjectOfANameIsKept: OLM v1's cache writes each object to a file named after its
// package, schema and name (its schema when it has none), so a later object replaces an
// earlier one: a duplicate bundle, and a second unnamed olm.deprecations object. Named
// olm.deprecations objects are all kept.
func TestTheLastObjectOfANameIsKept(t *testing.T) {
	rebuilt := strings.Replace(bundle("2.4.0"), `"image":"registry.io/repo/test-package@v2.4.0"`, `"image":"registry.io/repo/rebuilt"`, 1)
	p := read(t, strings.Join([]string{edges, rebuilt,
		`{"schema":"olm.deprecations","package":"test-package","entries":[{"reference":{"schema":"olm.bundle","name":"test-package.v2.4.0"},"message":"first"}]}`,
		`{"schema":"olm.deprecations","package":"test-package","entries":[{"reference":{"schema":"olm.bundle","name":"test-package.v2.3.0"},"message":"second"}]}`,
	}, "\n"))
	require.Len(t, p.Bundles, 6)
	assert.Equal(t, "registry.io/repo/rebuilt", p.Bundle("test-package.v2.4.0").Image)
	assert.Equal(t, []fbc.Deprecation{{Schema: "olm.bundle", Name: "test-package.v2.3.0", Message: "second"}}, p.Deprecations)

	p = read(t, strings.Join([]string{edges,
		`{"schema":"olm.deprecations","name":"a","package":"test-package","entries":[{"reference":{"schema":"olm.bundle","name":"test-package.v2.4.0"},"message":"first"}]}`,
		`{"schema":"olm.deprecations","name":"b","package":"test-package","entries":[{"reference":{"schema":"olm.bundle","name":"test-package.v2.3.0"},"message":"second"}]}`,
	}, "\n"))
	assert.Len(t, p.Deprecations, 2)
}

func TestUnknownSchemasAndBlankLinesAreSkipped(t *testing.T) {
	p := read(t, "\n"+`{"schema":"olm.template.basic","entries":[]}`+"\n\n"+bundle("1.0.0")+"\n")
	require.Len(t, p.Bundles, 1)
}
