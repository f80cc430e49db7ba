package fbc

import (
	"fmt"
	"slices"
)

// The bundle properties declaring a dependency, which operator-controller v1.2.0 refuses to
// install (resolve.NoDependencyValidation).
var dependencyProperties = []string{"olm.package.required", "olm.gvk.required", "olm.constraint"}

// maxDeprecationChoices bounds the combinations of olm.deprecations objects Admit ranks by.
const maxDeprecationChoices = 256

// Offer is one selected catalog's package, as OLM v1 resolves from it.
type Offer struct {
	Catalog  string
	Priority int32
	// Package is the catalog's package; nil when the catalog has none.
	Package *Package
}

// Admitted is a bundle OLM v1 could install, and the catalog that serves it.
type Admitted struct {
	Catalog string
	Candidate
}

// Admission is what OLM v1 could install for one query over the selected catalogs.
type Admission struct {
	// Bundles are every bundle OLM v1 could install now, catalog by catalog in offer order.
	Bundles []Admitted
	// Ambiguous names the catalogs of the same priority that each offer a first bundle, when
	// that is all OLM v1 could find: it refuses to choose and installs nothing.
	Ambiguous []string
	// MayFail says that some of OLM v1's arbitrary choices (among bundles that tie, among
	// olm.deprecations objects) end in a resolution that fails: it installs nothing then.
	MayFail bool
}

// Admit is what OLM v1 (operator-controller v1.2.0, resolve.CatalogResolver) could install for
// q from offers, the selected catalogs that are not Unavailable:
//
//   - in each catalog, the bundles that rank first (not deprecated first, then the highest
//     version, build metadata ignored): OLM v1 loads a package's bundles in no fixed order, so
//     every bundle that ties is one it could take;
//   - across catalogs, those of the catalogs whose first is not deprecated, if any, then of
//     the highest priority; two such catalogs of the same priority are an ambiguity it refuses;
//   - a first bundle that declares a dependency, or whose version cannot be read, fails the
//     resolution: OLM v1 installs nothing in its place.
//
// OLM v1 ranks a package by one olm.deprecations object, the first it loads; with several,
// every choice is taken. The error is a query that does not parse, or a package OLM v1 cannot
// load (Package.Malformed): it then resolves nothing.
func Admit(offers []Offer, q Query) (Admission, error) {
	var firsts [][]first
	for _, o := range offers {
		if o.Package == nil {
			continue
		}
		if len(o.Package.Malformed) > 0 {
			return Admission{}, fmt.Errorf("catalog %q: package %q cannot be loaded: %s", o.Catalog, o.Package.Name, o.Package.Malformed[0])
		}
		choices, err := o.firsts(q)
		if err != nil {
			return Admission{}, fmt.Errorf("catalog %q: %w", o.Catalog, err)
		}
		if len(choices) > 0 {
			firsts = append(firsts, choices)
		}
	}
	combos := 1
	for _, f := range firsts {
		combos *= len(f)
		if combos > maxDeprecationChoices {
			return Admission{}, fmt.Errorf("package %q: more than %d ways to choose among its olm.deprecations objects", offers[0].Package.Name, maxDeprecationChoices)
		}
	}
	return admitEach(firsts, combos), nil
}

// first is one catalog's first-ranked bundles for a query, by one deprecations object.
type first struct {
	catalog    string
	priority   int32
	deprecated bool
	// installable are the bundles that tie first and that OLM v1 would install when chosen.
	installable []Candidate
	// fails: a bundle that ties first is one OLM v1 fails to install when chosen.
	fails bool
}

// firsts are o's first-ranked bundles for q, one entry per olm.deprecations object OLM v1 may
// rank by; none when no bundle is accepted.
func (o Offer) firsts(q Query) ([]first, error) {
	var out []first
	for _, deps := range o.Package.deprecationChoices() {
		ranked, err := o.Package.rank(q, deps)
		if err != nil || len(ranked) == 0 {
			return nil, err
		}
		f := first{catalog: o.Catalog, priority: o.Priority, deprecated: ranked[0].Deprecated}
		for _, c := range ranked {
			if compareRank(c, ranked[0]) != 0 {
				break
			}
			if c.unversioned || c.declaresDependency() {
				f.fails = true
				continue
			}
			f.installable = append(f.installable, c)
		}
		out = append(out, f)
	}
	return out, nil
}

// admitEach resolves every combination of the catalogs' deprecation choices and gathers what
// each could install.
func admitEach(firsts [][]first, combos int) Admission {
	out := Admission{}
	seen := map[string]bool{}
	var ambiguous []string
	for n := range combos {
		choice := make([]first, len(firsts))
		k := n
		for i, f := range firsts {
			choice[i] = f[k%len(f)]
			k /= len(f)
		}
		winners := resolve(choice)
		if len(winners) > 1 {
			for _, w := range winners {
				ambiguous = append(ambiguous, w.catalog)
			}
			out.MayFail = true
			continue
		}
		for _, w := range winners {
			out.MayFail = out.MayFail || w.fails
			for _, c := range w.installable {
				if key := w.catalog + "/" + c.Name; !seen[key] {
					seen[key] = true
					out.Bundles = append(out.Bundles, Admitted{Catalog: w.catalog, Candidate: c})
				}
			}
		}
	}
	if len(out.Bundles) == 0 && len(ambiguous) > 0 {
		slices.Sort(ambiguous)
		out.Ambiguous = slices.Compact(ambiguous)
	}
	return out
}

// resolve are the catalogs OLM v1 chooses between: those whose first is not deprecated (all,
// when every first is), of the highest priority among them. More than one is its ambiguity.
func resolve(firsts []first) []first {
	anyCurrent := slices.ContainsFunc(firsts, func(f first) bool { return !f.deprecated })
	var tier []first
	for _, f := range firsts {
		if !anyCurrent || !f.deprecated {
			tier = append(tier, f)
		}
	}
	if len(tier) == 0 {
		return nil
	}
	top := slices.MaxFunc(tier, func(a, b first) int { return int(a.priority) - int(b.priority) }).priority
	return slices.DeleteFunc(tier, func(f first) bool { return f.priority != top })
}

// deprecationChoices are the olm.deprecations objects OLM v1 may rank p by: each one kept, or
// p's Deprecations as one when it was not read from content.
func (p *Package) deprecationChoices() [][]Deprecation {
	if len(p.deprecationObjects) == 0 {
		return [][]Deprecation{p.Deprecations}
	}
	return p.deprecationObjects
}

// declaresDependency says whether the bundle declares a dependency OLM v1 refuses.
func (b Bundle) declaresDependency() bool {
	return slices.ContainsFunc(b.Properties, func(p Property) bool { return slices.Contains(dependencyProperties, p.Type) })
}
