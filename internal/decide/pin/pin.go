// Package pin decides the version pin of an OLM v1 ClusterExtension that an ExtensionGate
// gates: which successors of the installed bundle OLM v1 would take, the policies' decision on
// each, and the version the pin may be moved to.
//
// The invariant it keeps: the pin it returns is the installed version, or a version whose
// admission set (every bundle OLM v1 could install for it, by OLM v1's own matching and
// ranking: fbc.Admit) is not empty and has, bundle by bundle, an extension document the
// policies allowed. At the installed version, OLM v1 may still install a same-version bundle
// no exact pin can exclude; those are judged too, and a denied one is reported
// (Outcome.Unexcludable), never called held.
package pin

import (
	"context"
	"slices"
	"time"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// MaxJudged bounds the bundles judged for one decision on the versions above the pin, highest
// version first, stopping at the first version allowed whole: a version never decided is
// counted (Outcome.Undecided) and said, never passed over silently.
const MaxJudged = 256

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
	// SelectorError says why the extension's catalog selector selects nothing: it does not
	// parse. The gate then follows nothing, and says so (Outcome.GateError).
	SelectorError string
	Config        input.Config
	Now           time.Time
}

// Judged is one bundle's document and the policies' decision on it.
type Judged struct {
	Candidate *input.ExtensionCandidate
	Input     map[string]any
	Result    *engine.Result
}

// Version is one exact pin and its admission set: every bundle OLM v1 could install for it
// (fbc.Admit over the selected catalogs), each decided.
type Version struct {
	// Version is the pin, without build metadata (which OLM v1's matching ignores).
	Version string
	Bundles []Judged
	// Ambiguous names the catalogs of the same priority OLM v1 refuses to choose between for
	// this pin: it installs nothing, so the pin is never moved there.
	Ambiguous []string
	// Allowed is true when Bundles is not empty and every one of them is allowed.
	Allowed bool
}

// Denied are the bundles of v the policies did not allow.
func (v Version) Denied() []Judged {
	var out []Judged
	for _, j := range v.Bundles {
		if !j.Result.Decision.Allowed {
			out = append(out, j)
		}
	}
	return out
}

// Unsettled are the denial codes that say the extension itself is not settled, whatever the
// bundle: OLM v1 is working on it (every pin not yet installed meets this), its operands roll,
// its catalogs cannot be read. They hold a move, but neither withdraw a pin OLM v1 is working
// on nor make a bundle of the installed version one the policies reject.
var Unsettled = []string{"ExtensionProgressing", "OperatorProgressing", "CatalogNotServing", "CatalogUnreadable"}

// Rejected are the bundles of v the policies reject for more than the extension being
// unsettled: a standing denial whose code is not Unsettled, or no allowance and no denial.
func (v Version) Rejected() []Judged {
	var out []Judged
	for _, j := range v.Bundles {
		d := j.Result.Decision
		if !d.Allowed && (d.BlockedBy() == "" || slices.ContainsFunc(d.Denials, func(den engine.Denial) bool {
			return !den.Overridden && !slices.Contains(Unsettled, den.Code)
		})) {
			out = append(out, j)
		}
	}
	return out
}

// Outcome is the decision on the pin.
type Outcome struct {
	// Installed is the installed version; "" when nothing is installed.
	Installed string
	// Versions are the successor versions decided, highest first: those within the gate's
	// range and channels above Target, and Target itself when it is a successor.
	Versions []Version
	// Kept is the installed version as a pin: the bundles OLM v1 could install while the pin
	// stays (bundles of the installed version in every catalog it ranks), the installed bundle
	// itself aside.
	Kept Version
	// Pinned is the ClusterExtension's current pin decided, when it is an exact version other
	// than the installed one; nil otherwise.
	Pinned *Version
	// Unexcludable are rejected bundles (Version.Rejected) that the pin Target admits and no
	// exact pin can exclude: bundles of the installed version OLM v1 could install, while the
	// pin is at the installed version and no successor is allowed.
	Unexcludable []Judged
	// Refused are versions above Target that OLM v1 refuses to install: catalogs of the same
	// priority serve them (Version.Ambiguous).
	Refused []Version
	// Undecided counts the versions above the highest one decided that were left undecided
	// (MaxJudged).
	Undecided int
	// Head is the decision reported: on the highest version decided (its first bundle that is
	// not allowed, else its first), else on the first unexcludable bundle, else on the
	// extension alone.
	Head Judged
	// Target is the pin: the highest version allowed whole, else Installed.
	Target string
	// GateError says why the gate follows nothing ("" when its range and channels can match).
	GateError string
}

// Decide judges the pins OLM v1 would act on, the installed version's and the successors'
// within the gate's range and channels (highest first, until one is allowed whole), and
// returns the version to pin. Facts.CatalogErrors gains an entry for a catalog whose content
// OLM v1 could not resolve from, so that the policies see why.
func Decide(ctx context.Context, f Facts, ev Evaluator) Outcome {
	out := Outcome{GateError: f.gateError()}
	if in := f.Extension.Extension.Status.Install; in != nil && in.Bundle.Name != "" {
		out.Installed = in.Bundle.Version
	}
	r := f.resolver(ctx, ev)
	if r == nil {
		out.Head = f.evaluate(ctx, ev, nil)
		return out
	}
	out.Kept = r.version(out.Installed)
	r.successors(&out)
	out.Target = out.Installed
	if len(f.CatalogErrors) == 0 && len(out.Versions) > 0 && out.Versions[len(out.Versions)-1].Allowed {
		out.Target = out.Versions[len(out.Versions)-1].Version
	}
	out.Pinned = r.pinned(out.Versions)
	if out.Target == out.Installed && out.Pinned == nil {
		out.Unexcludable = out.Kept.Rejected()
	}
	out.Head = f.head(ctx, ev, out)
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

func (f *Facts) evaluate(ctx context.Context, ev Evaluator, c *input.ExtensionCandidate) Judged {
	doc := f.Document(c, f.Config, f.Now)
	return Judged{Candidate: c, Input: doc, Result: ev.Evaluate(ctx, doc)}
}

// head is the decision reported for the gate.
func (f *Facts) head(ctx context.Context, ev Evaluator, out Outcome) Judged {
	if len(out.Versions) > 0 {
		top := out.Versions[0]
		if denied := top.Denied(); len(denied) > 0 {
			return denied[0]
		}
		return top.Bundles[0]
	}
	if len(out.Unexcludable) > 0 {
		return out.Unexcludable[0]
	}
	return f.evaluate(ctx, ev, nil)
}
