package fbc_test

import (
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
		`{"type":"olm.bundle.object","value":{"data":"`+strings.Repeat("A", 1000)+`"}},{"type":"olm.package","value":{"packageName":"test-package","version":"1.0.0"}}]}`)
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

// TestHostileContentIsRefusedWhole: content that is not a catalog, or larger than the limits,
// is an error naming the line, and no catalog.
func TestHostileContentIsRefusedWhole(t *testing.T) {
	small := fbc.Limits{MaxBytes: 4096, MaxObjectBytes: 1024}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", edges + "\n<html>", "line 9: not a catalog object"},
		{"an object without a schema", `{"name":"x"}`, "line 1: an object without a schema"},
		{"a bundle without a package", `{"schema":"olm.bundle","name":"x"}`, `line 1: olm.bundle "x" names no package`},
		{"a package without a name", `{"schema":"olm.package"}`, "line 1: an olm.package without a name"},
		{"malformed deprecations", `{"schema":"olm.deprecations","package":"p","entries":{}}`, `line 1: olm.deprecations of package "p"`},
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

func TestUnknownSchemasAndBlankLinesAreSkipped(t *testing.T) {
	p := read(t, "\n"+`{"schema":"olm.template.basic","entries":[]}`+"\n\n"+bundle("1.0.0")+"\n")
	require.Len(t, p.Bundles, 1)
}
