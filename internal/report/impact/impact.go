package impact

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/decide/approval"
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

// Change is one Subscription whose decision changes.
type Change struct {
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

// Outcomes are the decisions of one policy set: per Subscription, and per pending plan.
type Outcomes struct {
	subs  map[types.NamespacedName]Verdict
	plans map[types.NamespacedName]approval.Verdict
}

// Decide decides every Subscription e reaches, and judges their pending plans.
func Decide(ctx context.Context, e *evaluation.Evaluator) (*Outcomes, error) {
	out := &Outcomes{subs: map[types.NamespacedName]Verdict{}, plans: map[types.NamespacedName]approval.Verdict{}}
	err := e.Each(ctx, func(dec *approval.Decision) error {
		v := Verdict{Allowed: dec.Result.Decision.Allowed, Codes: []string{}}
		for _, den := range dec.Result.Decision.Denials {
			if !den.Overridden && !slices.Contains(v.Codes, den.Code) {
				v.Codes = append(v.Codes, den.Code)
			}
		}
		slices.Sort(v.Codes)
		out.subs[types.NamespacedName{Namespace: dec.Subscription.Namespace, Name: dec.Subscription.Name}] = v
		for _, p := range dec.Plans {
			out.plans[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
		}
		return nil
	})
	return out, err
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

// Diff lists what changes from was to will, in namespace and name order.
func Diff(was, will *Outcomes) *Report {
	r := &Report{Changes: []Change{}}
	for _, k := range slices.SortedFunc(maps.Keys(was.subs), compareKeys) {
		b, a := was.subs[k], will.subs[k]
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
		r.Changes = append(r.Changes, Change{Namespace: k.Namespace, Name: k.Name, Before: b, After: a})
	}
	for _, k := range slices.SortedFunc(maps.Keys(was.plans), compareKeys) {
		b, a := was.plans[k], will.plans[k]
		if b.Approvable != a.Approvable || b.WhyNot() != a.WhyNot() {
			r.plans = append(r.plans, planChange{key: k, before: b, after: a})
		}
	}
	return r
}

func compareKeys(a, b types.NamespacedName) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}
