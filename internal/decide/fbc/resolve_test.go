package fbc_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// readFixture reads a catalog catalogd served (test/testdata/olmv1).
func readFixture(t *testing.T, name string) *fbc.Catalog {
	t.Helper()
	f, err := os.Open(repo.Path("test", "testdata", "olmv1", name))
	require.NoError(t, err)
	defer f.Close()
	c, err := fbc.Read(f, fbc.DefaultLimits)
	require.NoError(t, err)
	return c
}

// names are the candidates' bundle names, in order.
func names(cs []fbc.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestReadsWhatCatalogdServes(t *testing.T) {
	c := readFixture(t, "catalog-revision-1.jsonl")
	require.Len(t, c.Packages, 1)
	p := c.Packages["tollgate-demo"]
	require.NotNil(t, p)
	assert.Equal(t, "stable", p.DefaultChannel)
	require.Len(t, p.Channels, 1)
	assert.Equal(t, []fbc.Entry{
		{Name: "tollgate-demo.v1.0.0"},
		{Name: "tollgate-demo.v1.1.0", Replaces: "tollgate-demo.v1.0.0", SkipRange: ">=1.0.0 <1.1.0"},
	}, p.Channels[0].Entries)
	require.Len(t, p.Bundles, 2)
	assert.Equal(t, "127.0.0.1:5443/bundles/tollgate-demo:v1.1.0", p.Bundles[1].Image)
	v, err := p.Bundles[1].Version()
	require.NoError(t, err)
	assert.Equal(t, "1.1.0", v.String())
}

// TestCandidatesAreWhatOLMv1Installed: each case is a step real operator-controller v1.2.0
// took on these catalogs (test/testdata/olmv1/observed/v1.2.0): the first candidate is the
// bundle it installed, none is a resolution it refused.
func TestCandidatesAreWhatOLMv1Installed(t *testing.T) {
	rev1, rev2 := readFixture(t, "catalog-revision-1.jsonl"), readFixture(t, "catalog-revision-2.jsonl")
	at := func(v string) *fbc.Installed { return &fbc.Installed{Name: "tollgate-demo.v" + v, Version: v} }
	for _, tc := range []struct {
		name    string
		catalog *fbc.Catalog
		q       fbc.Query
		want    []string
	}{
		{"first install pinned at 1.0.0 (20-…)", rev1, fbc.Query{Version: "1.0.0", Channels: []string{"stable"}}, []string{"tollgate-demo.v1.0.0"}},
		{"widened to >=1.0.0 <1.2.0 installs 1.1.0 (30-…)", rev1, fbc.Query{Version: ">=1.0.0 <1.2.0", Channels: []string{"stable"}, Installed: at("1.0.0")},
			[]string{"tollgate-demo.v1.1.0", "tollgate-demo.v1.0.0"}},
		{"the range holds at 1.1.0 while 1.2.0 is published (35-…)", rev2, fbc.Query{Version: ">=1.0.0 <1.2.0", Channels: []string{"stable"}, Installed: at("1.1.0")},
			[]string{"tollgate-demo.v1.1.0"}},
		{"widened to <1.3.0 installs 1.2.0 (36-…)", rev2, fbc.Query{Version: ">=1.0.0 <1.3.0", Channels: []string{"stable"}, Installed: at("1.1.0")},
			[]string{"tollgate-demo.v1.2.0", "tollgate-demo.v1.1.0"}},
		{"a pin on a missing 1.3.0 resolves nothing (40-…)", rev2, fbc.Query{Version: "1.3.0", Channels: []string{"stable"}, Installed: at("1.2.0")}, []string{}},
		{"a downgrade to 1.1.0 is refused (41-…)", rev2, fbc.Query{Version: "1.1.0", Channels: []string{"stable"}, Installed: at("1.2.0")}, []string{}},
		{"back in range stays at 1.2.0 (42-…)", rev2, fbc.Query{Version: ">=1.0.0 <1.3.0", Channels: []string{"stable"}, Installed: at("1.2.0")},
			[]string{"tollgate-demo.v1.2.0"}},
		{"1.0.0 reaches 1.2.0 in one step through its skipRange", rev2, fbc.Query{Installed: at("1.0.0")},
			[]string{"tollgate-demo.v1.2.0", "tollgate-demo.v1.1.0", "tollgate-demo.v1.0.0"}},
		{"SelfCertified follows no edge", rev2, fbc.Query{Version: "<1.2.0", Installed: at("1.2.0"), SelfCertified: true},
			[]string{"tollgate-demo.v1.1.0", "tollgate-demo.v1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.catalog.Packages["tollgate-demo"].Candidates(tc.q)
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(got))
		})
	}
}
