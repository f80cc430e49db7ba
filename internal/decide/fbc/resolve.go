package fbc

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"
)

// Installed is the bundle a ClusterExtension has installed (status.install.bundle).
type Installed struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Query is what a ClusterExtension asks of a package (spec.source.catalog).
type Query struct {
	// Version is a Masterminds semver range or exact version; empty selects every version.
	Version string
	// Channels restrict the bundles, and the upgrade edges followed, to these channels; none
	// means every channel.
	Channels []string
	// Installed, when set, restricts the bundles to its successors and itself, unless
	// SelfCertified (upgradeConstraintPolicy: SelfCertified).
	Installed     *Installed
	SelfCertified bool
}

// Candidate is a bundle OLM v1 would accept for a query, with its version and whether the
// package's deprecations name it.
type Candidate struct {
	Bundle
	Version    bsemver.Version
	Deprecated bool
	// unversioned: the version cannot be read (ranked last; OLM v1 fails to install it).
	unversioned bool
}

// Candidates are the bundles of p that OLM v1 accepts for q, in the order its resolver ranks
// them: bundles not deprecated first, then the highest version. A bundle whose version cannot
// be read is no candidate (OLM v1 ranks it last and fails to install it). The error says the
// query itself is malformed (a version range, or the installed version, that does not parse).
func (p *Package) Candidates(q Query) ([]Candidate, error) {
	ranked, err := p.rank(q, p.Deprecations)
	return slices.DeleteFunc(ranked, func(c Candidate) bool { return c.unversioned }), err
}

// rank are the bundles of p that OLM v1 accepts for q, ranked as it ranks them with
// deprecations (the entries of the olm.deprecations object it reads): not deprecated first,
// then the highest version (build metadata ignored), then those whose version cannot be read.
// Bundles that rank equal keep p's order, which OLM v1 does not fix.
func (p *Package) rank(q Query, deprecations []Deprecation) ([]Candidate, error) {
	accept, err := p.predicate(q)
	if err != nil {
		return nil, err
	}
	deprecated := deprecatedBundles(deprecations)
	var out []Candidate
	for _, b := range p.Bundles {
		v, err := b.Version()
		if accept(b, v, err == nil) {
			out = append(out, Candidate{Bundle: b, Version: v, Deprecated: deprecated[b.Name], unversioned: err != nil})
		}
	}
	slices.SortStableFunc(out, compareRank)
	return out, nil
}

// compareRank orders two candidates as OLM v1's resolver does (compare.ByDeprecationFunc, then
// compare.ByVersion).
func compareRank(a, b Candidate) int {
	switch {
	case a.Deprecated != b.Deprecated:
		if a.Deprecated {
			return 1
		}
		return -1
	case a.unversioned || b.unversioned:
		if a.unversioned == b.unversioned {
			return 0
		}
		if a.unversioned {
			return 1
		}
		return -1
	}
	return b.Version.Compare(a.Version)
}

// predicate is the conjunction of q's filters, as OLM v1 applies them.
func (p *Package) predicate(q Query) (func(b Bundle, v bsemver.Version, versioned bool) bool, error) {
	var preds []func(Bundle, bsemver.Version, bool) bool
	channels := p.channels(q.Channels)
	if len(q.Channels) > 0 {
		preds = append(preds, func(b Bundle, _ bsemver.Version, _ bool) bool { return inAnyChannel(b.Name, channels) })
	}
	if q.Version != "" {
		r, err := mmsemver.NewConstraint(q.Version)
		if err != nil {
			return nil, fmt.Errorf("version range %q: %w", q.Version, err)
		}
		preds = append(preds, func(_ Bundle, v bsemver.Version, ok bool) bool { return ok && inRange(r, v) })
	}
	if q.Installed != nil && !q.SelfCertified {
		successor, err := successorOf(*q.Installed, channels)
		if err != nil {
			return nil, err
		}
		preds = append(preds, successor)
	}
	return func(b Bundle, v bsemver.Version, versioned bool) bool {
		for _, pred := range preds {
			if !pred(b, v, versioned) {
				return false
			}
		}
		return true
	}, nil
}

// channels are p's channels named in names, or all of them when names is empty. With names,
// OLM v1 follows upgrade edges only in those channels.
func (p *Package) channels(names []string) []Channel {
	if len(names) == 0 {
		return p.Channels
	}
	var out []Channel
	for _, c := range p.Channels {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// successorOf accepts the bundles that replace, skip or skipRange installed in channels, and
// any bundle of installed's version (staying is always possible).
func successorOf(installed Installed, channels []Channel) (func(Bundle, bsemver.Version, bool) bool, error) {
	iv, current, err := installed.versions()
	if err != nil {
		return nil, fmt.Errorf("installed bundle %q: version %q: %w", installed.Name, installed.Version, err)
	}
	return func(b Bundle, v bsemver.Version, versioned bool) bool {
		for _, c := range channels {
			for _, e := range c.Entries {
				if e.Name == b.Name && e.succeeds(installed.Name, iv) {
					return true
				}
			}
		}
		return versioned && inRange(current, v)
	}, nil
}

// versions reads the installed version as OLM v1 does: with blang for the upgrade edges, and
// as a Masterminds constraint of exactly that version for staying.
func (in Installed) versions() (bsemver.Version, *mmsemver.Constraints, error) {
	v, err := bsemver.Parse(in.Version)
	if err != nil {
		return v, nil, err
	}
	same, err := mmsemver.NewVersion(in.Version)
	if err != nil {
		return v, nil, err
	}
	c, err := mmsemver.NewConstraint(same.String())
	return v, c, err
}

// succeeds says whether the entry is an upgrade edge from the bundle named name at version v.
// A skipRange that does not parse is no edge.
func (e Entry) succeeds(name string, v bsemver.Version) bool {
	if e.Replaces == name || slices.Contains(e.Skips, name) {
		return true
	}
	if e.SkipRange == "" {
		return false
	}
	r, err := bsemver.ParseRange(e.SkipRange)
	return err == nil && r(v)
}

// inRange checks v against a Masterminds range, as OLM v1 does: through its string form.
func inRange(r *mmsemver.Constraints, v bsemver.Version) bool {
	mv, err := mmsemver.NewVersion(v.String())
	return err == nil && r.Check(mv)
}

// inAnyChannel says whether a bundle named name is an entry of one of channels.
func inAnyChannel(name string, channels []Channel) bool {
	for _, c := range channels {
		if slices.ContainsFunc(c.Entries, func(e Entry) bool { return e.Name == name }) {
			return true
		}
	}
	return false
}

// deprecatedBundles are the bundles deprecations name.
func deprecatedBundles(deprecations []Deprecation) map[string]bool {
	out := map[string]bool{}
	for _, d := range deprecations {
		if d.Schema == SchemaBundle {
			out[d.Name] = true
		}
	}
	return out
}

// Version is the bundle's version, from its olm.package property (the first, as OLM v1 reads it).
func (b Bundle) Version() (bsemver.Version, error) {
	for _, p := range b.Properties {
		if p.Type != PropertyPackage {
			continue
		}
		var v struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return bsemver.Version{}, fmt.Errorf("bundle %q: olm.package property: %w", b.Name, err)
		}
		return bsemver.Parse(v.Version)
	}
	return bsemver.Version{}, errNoVersion
}

var errNoVersion = errors.New("no olm.package property")
