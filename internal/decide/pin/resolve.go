package pin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// resolver answers, for one installed extension, what OLM v1 could install for a pin over the
// selected catalogs it resolves from, and judges it.
type resolver struct {
	f      *Facts
	ctx    context.Context
	ev     Evaluator
	offers []fbc.Offer
	pkgs   map[string]*fbc.Package
	// query is the extension's (its channels, the installed bundle, its upgrade constraint
	// policy), without a version.
	query fbc.Query
}

// resolver is nil when nothing is installed or the extension names no package. A selected
// catalog without content, or whose copy of the package OLM v1 cannot load (it then resolves
// nothing), gains a catalog error.
func (f *Facts) resolver(ctx context.Context, ev Evaluator) *resolver {
	for _, c := range f.Catalogs {
		if f.Content[c.Name] == nil && c.Spec.AvailabilityMode != olmv1.AvailabilityModeUnavailable {
			f.catalogError(c.Name, "its content was not read")
		}
	}
	ext := f.Extension.Extension
	src, in := ext.Spec.Source.Catalog, ext.Status.Install
	if src == nil || in == nil || in.Bundle.Name == "" {
		return nil
	}
	r := &resolver{f: f, ctx: ctx, ev: ev, pkgs: map[string]*fbc.Package{}, query: fbc.Query{
		Channels:      src.Channels,
		Installed:     &fbc.Installed{Name: in.Bundle.Name, Version: in.Bundle.Version},
		SelfCertified: src.UpgradeConstraintPolicy == olmv1.UpgradeConstraintPolicySelfCertified,
	}}
	for _, c := range f.Catalogs {
		content := f.Content[c.Name]
		if content == nil || c.Spec.AvailabilityMode == olmv1.AvailabilityModeUnavailable {
			continue // OLM v1 ignores an Unavailable catalog
		}
		pkg := content.Packages[src.PackageName]
		if pkg != nil && len(pkg.Malformed) > 0 {
			f.catalogError(c.Name, fmt.Sprintf("OLM v1 cannot load package %s from it, and resolves nothing while it cannot: %s", pkg.Name, pkg.Malformed[0]))
			continue
		}
		r.offers = append(r.offers, fbc.Offer{Catalog: c.Name, Priority: c.Spec.Priority, Package: pkg})
		r.pkgs[c.Name] = pkg
	}
	return r
}

// fail records err, a failure to compute what OLM v1 would install, on every catalog offered.
func (r *resolver) fail(err error) {
	for _, o := range r.offers {
		r.f.catalogError(o.Catalog, fmt.Sprintf("what OLM v1 would install from %s cannot be computed: %v", r.query.Installed.Name, err))
	}
}

// version is v as an exact pin: its admission set, each bundle judged (the installed bundle
// aside: staying on it moves nothing).
func (r *resolver) version(v string) Version {
	q := r.query
	q.Version = v
	out := Version{Version: withoutBuild(v)}
	adm, err := fbc.Admit(r.offers, q)
	if err != nil {
		r.fail(err)
		return out
	}
	out.Ambiguous = adm.Ambiguous
	out.Allowed = len(adm.Bundles) > 0
	for _, b := range adm.Bundles {
		if b.Name == q.Installed.Name && b.Version.String() == q.Installed.Version {
			continue
		}
		j := r.judge(b)
		out.Allowed = out.Allowed && j.Result.Decision.Allowed
		out.Bundles = append(out.Bundles, j)
	}
	return out
}

// judge decides one bundle OLM v1 could install.
func (r *resolver) judge(b fbc.Admitted) Judged {
	pkg := r.pkgs[b.Catalog]
	channels := pkg.ChannelsOf(b.Name, r.query.Channels)
	return r.f.evaluate(r.ctx, r.ev, &input.ExtensionCandidate{
		Catalog: b.Catalog, Package: pkg.Name, Bundle: b.Bundle, Version: b.Version.String(),
		Channels: channels, Deprecations: pkg.DeprecationsOf(b.Name, channels),
	})
}

// successors decides the followable versions, highest first, until one is allowed whole or
// MaxJudged bundles were judged. A version OLM v1 would install nothing for is passed over; one
// it refuses as ambiguous is recorded (Outcome.Refused).
func (r *resolver) successors(out *Outcome) {
	vs := r.followable()
	judged := 0
	for i, v := range vs {
		if judged >= MaxJudged {
			out.Undecided = len(vs) - i
			return
		}
		ver := r.version(v)
		judged += len(ver.Bundles)
		switch {
		case len(ver.Bundles) > 0:
			out.Versions = append(out.Versions, ver)
			if ver.Allowed {
				return
			}
		case len(ver.Ambiguous) > 0:
			out.Refused = append(out.Refused, ver)
		}
	}
}

// followable are the versions the gate lets the extension be moved to, highest first, build
// metadata left out: versions of bundles OLM v1 accepts from the installed one (through an
// upgrade edge of the gate's channels, or under SelfCertified any bundle of those channels, but
// never one below the installed version), within the gate's range, other than the installed
// version.
func (r *resolver) followable() []string {
	q, ok := r.gateQuery()
	if !ok {
		return nil
	}
	iv, err := bsemver.Parse(r.query.Installed.Version)
	if err != nil {
		r.fail(err)
		return nil
	}
	seen := map[string]bool{}
	var vs []bsemver.Version
	for _, o := range r.offers {
		if o.Package == nil {
			continue
		}
		cands, err := o.Package.Candidates(q)
		if err != nil {
			r.fail(err)
			return nil
		}
		for _, c := range cands {
			v := c.Version
			v.Build = nil
			if v.Compare(iv) == 0 || (q.SelfCertified && v.LT(iv)) || seen[v.String()] || !r.f.inRange(v.String()) {
				continue
			}
			seen[v.String()] = true
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b bsemver.Version) int { return b.Compare(a) })
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.String())
	}
	return out
}

// gateQuery is the extension's query through the gate's channels (those the extension selects
// too); false when the gate's channels leave none.
func (r *resolver) gateQuery() (fbc.Query, bool) {
	q := r.query
	channels, ok := r.f.gateChannels()
	if channels != nil {
		q.Channels = channels
	}
	return q, ok
}

// gateChannels are the channels the gate follows edges in: its own that the extension also
// selects (nil: the extension's); false when none is left.
func (f *Facts) gateChannels() ([]string, bool) {
	if f.Gate == nil || len(f.Gate.Spec.Channels) == 0 {
		return nil, true
	}
	var own []string
	if src := f.Extension.Extension.Spec.Source.Catalog; src != nil {
		own = src.Channels
	}
	var out []string
	for _, c := range f.Gate.Spec.Channels {
		if len(own) == 0 || slices.Contains(own, c) {
			out = append(out, c)
		}
	}
	return out, len(out) > 0
}

// pinned is the extension's current pin decided (as among decided, or now), when it is an
// exact version other than the installed one.
func (r *resolver) pinned(decided []Version) *Version {
	cur := r.f.Extension.Extension.Spec.Source.Catalog.Version
	v, err := bsemver.Parse(cur)
	if err != nil {
		return nil
	}
	iv, err := bsemver.Parse(r.query.Installed.Version)
	if err != nil || v.Compare(iv) == 0 {
		return nil
	}
	if i := slices.IndexFunc(decided, func(d Version) bool { return d.Version == withoutBuild(cur) }); i >= 0 {
		return &decided[i]
	}
	ver := r.version(cur)
	return &ver
}

// gateError says why the gate follows nothing: an extension whose catalog selector does not
// parse, a range that does not parse, or channels the extension does not select.
func (f *Facts) gateError() string {
	if f.SelectorError != "" {
		return f.SelectorError
	}
	if f.Gate == nil {
		return ""
	}
	if f.Gate.Spec.Version != "" {
		if _, err := mmsemver.NewConstraint(f.Gate.Spec.Version); err != nil {
			return fmt.Sprintf("spec.version %q is not a version range: %v", f.Gate.Spec.Version, err)
		}
	}
	if _, ok := f.gateChannels(); !ok {
		return fmt.Sprintf("spec.channels [%s] has no channel of the ClusterExtension's spec.source.catalog.channels [%s]",
			strings.Join(f.Gate.Spec.Channels, " "), strings.Join(f.Extension.Extension.Spec.Source.Catalog.Channels, " "))
	}
	return ""
}

// inRange says whether v is within the gate's spec.version (any version without a gate or
// range). A range that does not parse follows nothing; the gate's status says so.
func (f *Facts) inRange(v string) bool {
	if f.Gate == nil || f.Gate.Spec.Version == "" {
		return true
	}
	r, err := mmsemver.NewConstraint(f.Gate.Spec.Version)
	if err != nil {
		return false
	}
	mv, err := mmsemver.NewVersion(v)
	return err == nil && r.Check(mv)
}

// withoutBuild is v without its build metadata, which OLM v1's matching ignores; v itself
// when it is no version.
func withoutBuild(v string) string {
	bv, err := bsemver.Parse(v)
	if err != nil {
		return v
	}
	bv.Build = nil
	return bv.String()
}
