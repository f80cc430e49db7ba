package fbc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
)

// named is an olm.bundle line of package test-package named name at version v, with extra
// properties.
func named(name, v string, props ...string) string {
	return `{"schema":"olm.bundle","name":"` + name + `","package":"test-package","image":"registry.io/` + name +
		`","properties":[{"type":"olm.package","value":{"packageName":"test-package","version":"` + v + `"}}` + strings.Join(append([]string{""}, props...), ",") + `]}`
}

// deprecate is an olm.deprecations object of test-package deprecating the bundles named.
func deprecate(bundles ...string) string {
	var entries []string
	for _, b := range bundles {
		entries = append(entries, fmt.Sprintf(`{"reference":{"schema":"olm.bundle","name":%q},"message":"gone"}`, b))
	}
	return `{"schema":"olm.deprecations","package":"test-package","entries":[` + strings.Join(entries, ",") + `]}`
}

// stable is a channel stable of test-package whose entries are the bundles named, each
// replacing the one before.
func stable(bundles ...string) string {
	var entries []string
	for i, b := range bundles {
		e := fmt.Sprintf(`{"name":%q`, b)
		if i > 0 {
			e += fmt.Sprintf(`,"replaces":%q`, bundles[i-1])
		}
		entries = append(entries, e+"}")
	}
	return `{"schema":"olm.channel","name":"stable","package":"test-package","entries":[` + strings.Join(entries, ",") + `]}`
}

func offer(t *testing.T, catalog string, priority int32, lines ...string) fbc.Offer {
	return fbc.Offer{Catalog: catalog, Priority: priority, Package: read(t, strings.Join(lines, "\n"))}
}

func admitted(a fbc.Admission) []string {
	out := []string{}
	for _, b := range a.Bundles {
		out = append(out, b.Catalog+"/"+b.Name)
	}
	return out
}

var at100 = &fbc.Installed{Name: "v1.0.0", Version: "1.0.0"}

// TestAdmitAsOLMv1Resolves: what operator-controller v1.2.0's CatalogResolver could install
// for an exact pin, with the rules it applies (resolve/catalog.go).
func TestAdmitAsOLMv1Resolves(t *testing.T) {
	for _, tc := range []struct {
		name      string
		offers    func(t *testing.T) []fbc.Offer
		q         fbc.Query
		want      []string
		ambiguous []string
	}{
		{"a pin ignores build metadata: 1.1.0+2 admits 1.1.0+1", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, stable("v1.0.0", "v1.1.0+1", "v1.1.0+2"), named("v1.0.0", "1.0.0"), named("v1.1.0+1", "1.1.0+1"), named("v1.1.0+2", "1.1.0+2"),
				`{"schema":"olm.channel","name":"fast","package":"test-package","entries":[{"name":"v1.1.0+2","replaces":"v1.0.0"}]}`)}
		}, fbc.Query{Version: "1.1.0+2", Installed: at100}, []string{"a/v1.1.0+1", "a/v1.1.0+2"}, nil},
		{"a held pin admits a rebuild of the installed version", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, stable("v1.0.0"), named("v1.0.0", "1.0.0"), named("v1.0.0+1", "1.0.0+1"))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{"a/v1.0.0", "a/v1.0.0+1"}, nil},
		{"a deprecated installed bundle gives way to a same-version sibling", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, stable("v1.0.0"), named("v1.0.0", "1.0.0"), named("other.v1.0.0", "1.0.0"), deprecate("v1.0.0"))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{"a/other.v1.0.0"}, nil},
		{"a higher-priority catalog's same-version bundle is the one taken", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, named("v1.0.0", "1.0.0")), offer(t, "b", 10, named("b.v1.0.0", "1.0.0"))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{"b/b.v1.0.0"}, nil},
		{"a lower-priority catalog's bundle is never taken", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 5, named("v1.0.0", "1.0.0")), offer(t, "b", 0, named("b.v1.0.0", "1.0.0"))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{"a/v1.0.0"}, nil},
		{"not deprecated beats a higher priority", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 5, named("v1.0.0", "1.0.0"), deprecate("v1.0.0")), offer(t, "b", 0, named("b.v1.0.0", "1.0.0"))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{"b/b.v1.0.0"}, nil},
		{"two catalogs of the same priority: OLM v1 refuses to choose", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, named("v1.0.0", "1.0.0")), offer(t, "b", 0, named("v1.0.0", "1.0.0"))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{}, []string{"a", "b"}},
		{"a bundle declaring a dependency is never installed", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, named("v1.0.0", "1.0.0", `{"type":"olm.gvk.required","value":{}}`))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{}, nil},
		{"several named olm.deprecations objects: either may rank", func(t *testing.T) []fbc.Offer {
			return []fbc.Offer{offer(t, "a", 0, named("v1.0.0", "1.0.0"), named("x.v1.0.0", "1.0.0"),
				strings.Replace(deprecate("v1.0.0"), `"package"`, `"name":"one","package"`, 1),
				strings.Replace(deprecate("x.v1.0.0"), `"package"`, `"name":"two","package"`, 1))}
		}, fbc.Query{Version: "1.0.0", Installed: at100}, []string{"a/x.v1.0.0", "a/v1.0.0"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fbc.Admit(tc.offers(t), tc.q)
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, admitted(got))
			assert.Equal(t, tc.ambiguous, got.Ambiguous)
		})
	}
}

// A package OLM v1 cannot load in one selected catalog fails the whole resolution.
func TestAdmitRefusesAPackageOLMv1CannotLoad(t *testing.T) {
	bad := offer(t, "bad", 0, named("v1.0.0", "1.0.0"), `{"package":"test-package","name":"x"}`)
	_, err := fbc.Admit([]fbc.Offer{offer(t, "a", 10, named("v1.0.0", "1.0.0")), bad}, fbc.Query{Version: "1.0.0"})
	assert.ErrorContains(t, err, `catalog "bad": package "test-package" cannot be loaded: `)
}
