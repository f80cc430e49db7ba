package impact

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
)

// Report is the output of `tollgate policy diff -o json`; cmd/tollgate/README.md documents
// it. The unexported fields are for the table only.
type Report struct {
	Summary Summary  `json:"summary"`
	Changes []Change `json:"changes"`

	before, after string // policy revisions
	scope         string
	plans         []planChange
}

// Summary counts the Subscriptions by how their decision changes.
type Summary struct {
	NewlyBlocked int `json:"newlyBlocked"`
	NewlyAllowed int `json:"newlyAllowed"`
	Changed      int `json:"changed"`
	Unchanged    int `json:"unchanged"`
}

// Change is one Subscription (or, with Kind ClusterExtension, one OLM v1 ClusterExtension's
// highest successor) whose decision changes.
type Change struct {
	Kind      string  `json:"kind,omitempty"`
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Before    Verdict `json:"before"`
	After     Verdict `json:"after"`
}

// Verdict is a decision reduced to what a diff compares: allowed, and the standing (not
// overridden) denial codes, sorted.
type Verdict struct {
	Allowed bool     `json:"allowed"`
	Codes   []string `json:"codes"`
}

func (v Verdict) String() string {
	if v.Allowed {
		return "allowed"
	}
	if len(v.Codes) == 0 {
		return "denied"
	}
	return "held: " + strings.Join(v.Codes, ", ")
}

type planChange struct {
	key           types.NamespacedName
	before, after approval.Verdict
}

// Outcomes are the decisions of one policy set: per Subscription, per pending plan, and per
// ClusterExtension (the decision on its highest successor).
type Outcomes struct {
	subs  map[types.NamespacedName]Verdict
	plans map[types.NamespacedName]approval.Verdict
	exts  map[types.NamespacedName]Verdict
}

// Decide decides every Subscription e reaches, and judges their pending plans.
func Decide(ctx context.Context, e *evaluation.Evaluator) (*Outcomes, error) {
	out := &Outcomes{subs: map[types.NamespacedName]Verdict{}, plans: map[types.NamespacedName]approval.Verdict{}, exts: map[types.NamespacedName]Verdict{}}
	err := e.Each(ctx, func(dec *approval.Decision) error {
		d := evaluation.Decision{Allowed: dec.Result.Decision.Allowed, Denials: gatestatus.Denials(dec.Result.Decision)}
		out.subs[types.NamespacedName{Namespace: dec.Subscription.Namespace, Name: dec.Subscription.Name}] = verdictOf(d)
		for _, p := range dec.Plans {
			out.plans[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	exts, err := e.Extensions(ctx)
	for _, x := range exts {
		out.exts[types.NamespacedName{Name: x.Name}] = verdictOf(x.Decision)
	}
	return out, err
}

// verdictOf is a decision as a diff compares it: allowed, and the standing codes, sorted.
func verdictOf(d evaluation.Decision) Verdict {
	v := Verdict{Allowed: d.Allowed, Codes: []string{}}
	for _, code := range d.StandingCodes() {
		if !slices.Contains(v.Codes, code) {
			v.Codes = append(v.Codes, code)
		}
	}
	slices.Sort(v.Codes)
	return v
}

// Compare decides with the policies in force and with the candidate, and lists what changes;
// scope says what was decided (for the table's heading).
func Compare(ctx context.Context, inForce, candidate *evaluation.Evaluator, scope string) (*Report, error) {
	was, err := Decide(ctx, inForce)
	if err != nil {
		return nil, err
	}
	will, err := Decide(ctx, candidate)
	if err != nil {
		return nil, err
	}
	r := Diff(was, will)
	r.before, r.after, r.scope = inForce.Engine.Revision(), candidate.Engine.Revision(), scope
	return r, nil
}

// Diff lists what changes from was to will, in namespace and name order, the Subscriptions
// first, then the ClusterExtensions.
func Diff(was, will *Outcomes) *Report {
	r := &Report{Changes: []Change{}}
	r.diff("", was.subs, will.subs)
	r.diff("ClusterExtension", was.exts, will.exts)
	for _, k := range slices.SortedFunc(maps.Keys(was.plans), compareKeys) {
		b, a := was.plans[k], will.plans[k]
		if b.Approvable != a.Approvable || b.WhyNot() != a.WhyNot() {
			r.plans = append(r.plans, planChange{key: k, before: b, after: a})
		}
	}
	return r
}

// diff adds the changes from was to will of the objects of kind ("" for Subscriptions).
func (r *Report) diff(kind string, was, will map[types.NamespacedName]Verdict) {
	for _, k := range slices.SortedFunc(maps.Keys(was), compareKeys) {
		b, a := was[k], will[k]
		switch {
		case b.Allowed && !a.Allowed:
			r.Summary.NewlyBlocked++
		case !b.Allowed && a.Allowed:
			r.Summary.NewlyAllowed++
		case !slices.Equal(b.Codes, a.Codes):
			r.Summary.Changed++
		default:
			r.Summary.Unchanged++
			continue
		}
		r.Changes = append(r.Changes, Change{Kind: kind, Namespace: k.Namespace, Name: k.Name, Before: b, After: a})
	}
}

func compareKeys(a, b types.NamespacedName) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}
