// Package pin decides the version pin of an OLM v1 ClusterExtension that an ExtensionGate
// gates: which successors of the installed bundle OLM v1 would take, the policies' decision on
// each, and the version the pin may be moved to.
//
// The invariant it keeps: the pin it returns is the installed version, or a version every
// bundle of which OLM v1 could install from the installed one (the successors in every selected
// catalog, through the extension's own channels) has an extension document the policies
// allowed. OLM v1 installs, for an exact pin, any bundle of that version that is a successor;
// so no bundle it could install is one the policies did not see.
package pin

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// MaxVersions caps the successor versions decided at once, highest first.
const MaxVersions = 32

// Evaluator decides one input document; *engine.Engine is one.
type Evaluator interface {
	Evaluate(ctx context.Context, input map[string]any) *engine.Result
}

// Facts are what the pin is decided on.
type Facts struct {
	input.Extension
	// Content is each readable selected catalog's content, by catalog name. A selected catalog
	// without content must have an entry in CatalogErrors.
	Content map[string]*fbc.Catalog
	Config  input.Config
	Now     time.Time
}

// Judged is one bundle's document and the policies' decision on it.
type Judged struct {
	Candidate *input.ExtensionCandidate
	Input     map[string]any
	Result    *engine.Result
}

// Version is one successor version: every bundle of it OLM v1 could install, each decided.
type Version struct {
	Version string
	Bundles []Judged
	// Allowed is true when every one of Bundles is allowed.
	Allowed bool
}

// Outcome is the decision on the pin.
type Outcome struct {
	// Installed is the installed version; "" when nothing is installed.
	Installed string
	// Versions are the successor versions within the gate's range and channels, highest first.
	Versions []Version
	// Head is the decision reported: on the highest successor (its first bundle that is not
	// allowed, else its first), or, without a successor, on the extension alone.
	Head Judged
	// Target is the pin: the highest allowed version, else Installed.
	Target string
	// GateError says why the gate's spec.version follows nothing ("" when it is a range).
	GateError string
}

// Decide judges every successor OLM v1 would take from the installed bundle and returns the
// version to pin. Facts.CatalogErrors gains an entry for a catalog whose successors cannot be
// computed, so that the policies see why.
func Decide(ctx context.Context, f Facts, ev Evaluator) Outcome {
	out := Outcome{}
	if f.Gate != nil && f.Gate.Spec.Version != "" {
		if _, err := mmsemver.NewConstraint(f.Gate.Spec.Version); err != nil {
			out.GateError = fmt.Sprintf("spec.version %q is not a version range: %v", f.Gate.Spec.Version, err)
		}
	}
	if in := f.Extension.Extension.Status.Install; in != nil && in.Bundle.Name != "" {
		out.Installed = in.Bundle.Version
	}
	for _, c := range f.Catalogs {
		if f.Content[c.Name] == nil {
			f.catalogError(c.Name, "its content was not read")
		}
	}
	byVersion := candidates(&f)
	followable := f.followable(byVersion)
	for _, v := range followable {
		out.Versions = append(out.Versions, f.judge(ctx, ev, v, byVersion[v]))
	}
	out.Head = f.head(ctx, ev, out.Versions)
	out.Target = out.Installed
	if out.Installed == "" || len(f.CatalogErrors) > 0 {
		// A catalog not read may serve a bundle of any version OLM v1 would install: nothing
		// is complete enough to move the pin on, whatever the policies say of the rest.
		return out
	}
	if i := slices.IndexFunc(out.Versions, func(v Version) bool { return v.Allowed }); i >= 0 {
		out.Target = out.Versions[i].Version
	}
	return out
}

// candidates are the bundles OLM v1 could install from the installed one, in every readable
// selected catalog, by version, the installed version left out.
func candidates(f *Facts) map[string][]*input.ExtensionCandidate {
	ext := f.Extension.Extension
	src := ext.Spec.Source.Catalog
	in := ext.Status.Install
	if src == nil || in == nil || in.Bundle.Name == "" {
		return nil
	}
	q := fbc.Query{
		Channels:      src.Channels,
		Installed:     &fbc.Installed{Name: in.Bundle.Name, Version: in.Bundle.Version},
		SelfCertified: src.UpgradeConstraintPolicy == olmv1.UpgradeConstraintPolicySelfCertified,
	}
	out := map[string][]*input.ExtensionCandidate{}
	for _, name := range slices.Sorted(maps.Keys(f.Content)) {
		pkg := f.Content[name].Packages[src.PackageName]
		if pkg == nil {
			continue
		}
		cands, err := pkg.Candidates(q)
		if err != nil {
			f.catalogError(name, fmt.Sprintf("the successors of %s cannot be computed: %v", in.Bundle.Name, err))
			continue
		}
		for _, c := range cands {
			if v := c.Version.String(); v != in.Bundle.Version {
				channels := pkg.ChannelsOf(c.Name, src.Channels)
				out[v] = append(out[v], &input.ExtensionCandidate{
					Catalog: name, Package: pkg.Name, Bundle: c.Bundle, Version: v,
					Channels: channels, Deprecations: pkg.DeprecationsOf(c.Name, channels),
				})
			}
		}
	}
	return out
}

func (f *Facts) catalogError(name, msg string) {
	if f.CatalogErrors == nil {
		f.CatalogErrors = map[string]string{}
	}
	if _, ok := f.CatalogErrors[name]; !ok {
		f.CatalogErrors[name] = msg
	}
}

// followable are the versions the gate lets the extension follow (its range, and a bundle in
// one of its channels), highest first, at most MaxVersions.
func (f *Facts) followable(byVersion map[string][]*input.ExtensionCandidate) []string {
	var vs []bsemver.Version
	for v, cands := range byVersion {
		if f.inRange(v) && f.inChannels(cands) {
			vs = append(vs, bsemver.MustParse(v)) // a candidate's version is a parsed one
		}
	}
	slices.SortFunc(vs, func(a, b bsemver.Version) int { return b.Compare(a) })
	out := make([]string, 0, min(len(vs), MaxVersions))
	for _, v := range vs[:min(len(vs), MaxVersions)] {
		out = append(out, v.String())
	}
	return out
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

func (f *Facts) inChannels(cands []*input.ExtensionCandidate) bool {
	if f.Gate == nil || len(f.Gate.Spec.Channels) == 0 {
		return true
	}
	return slices.ContainsFunc(cands, func(c *input.ExtensionCandidate) bool {
		return slices.ContainsFunc(c.Channels, func(ch string) bool { return slices.Contains(f.Gate.Spec.Channels, ch) })
	})
}

// judge decides every bundle of version v.
func (f *Facts) judge(ctx context.Context, ev Evaluator, v string, cands []*input.ExtensionCandidate) Version {
	out := Version{Version: v, Allowed: len(cands) > 0}
	for _, c := range cands {
		j := f.evaluate(ctx, ev, c)
		out.Allowed = out.Allowed && j.Result.Decision.Allowed
		out.Bundles = append(out.Bundles, j)
	}
	return out
}

func (f *Facts) evaluate(ctx context.Context, ev Evaluator, c *input.ExtensionCandidate) Judged {
	doc := f.Document(c, f.Config, f.Now)
	return Judged{Candidate: c, Input: doc, Result: ev.Evaluate(ctx, doc)}
}

// head is the decision reported for the gate.
func (f *Facts) head(ctx context.Context, ev Evaluator, versions []Version) Judged {
	if len(versions) == 0 {
		return f.evaluate(ctx, ev, nil)
	}
	top := versions[0]
	if i := slices.IndexFunc(top.Bundles, func(j Judged) bool { return !j.Result.Decision.Allowed }); i >= 0 {
		return top.Bundles[i]
	}
	return top.Bundles[0]
}
