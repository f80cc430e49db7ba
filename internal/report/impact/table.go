package impact

import (
	"io"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Tables are the tables of the report's table, as TableOptions.Only names them.
var Tables = []string{"newly-blocked", "newly-allowed", "codes-changed", "plans"}

// groups are the tables of changed Subscriptions, each with its title and its rows.
var groups = []struct {
	name, title string
	keep        func(Change) bool
}{
	{"newly-blocked", "NEWLY BLOCKED", func(c Change) bool { return c.Before.Allowed && !c.After.Allowed }},
	{"newly-allowed", "NEWLY ALLOWED", func(c Change) bool { return !c.Before.Allowed && c.After.Allowed }},
	{"codes-changed", "CODES CHANGED", func(c Change) bool { return c.Before.Allowed == c.After.Allowed }},
}

// Printable is the report in every output format: -o name lists the Subscriptions whose
// decision changes.
func (r *Report) Printable() printers.Printable {
	return printers.Printable{Doc: r, Human: r.WriteTable, Names: printers.Refs(v1alpha1.SubscriptionGroupKind, r.Changes, func(c Change) string { return c.Name })}
}

// WriteTable prints the diff for a person, grouped by kind of change. -o wide adds the
// codes the candidate adds and removes; o.Only picks one table.
func (r *Report) WriteTable(w io.Writer, o printers.TableOptions) error {
	if o.Whole() {
		o.Title(w, "Policy revision %s in force, candidate %s; %s.\n", text.Escape(r.before), text.Escape(r.after), text.Escape(r.scope))
	}
	for _, g := range groups {
		if err := renderChanges(w, r, o, g.name, g.title, g.keep); err != nil {
			return err
		}
	}
	if err := renderPlanChanges(w, r, o); err != nil {
		return err
	}
	if o.Whole() {
		s := r.Summary
		o.Title(w, "\nSummary: %d newly blocked, %d newly allowed, %d held by other codes, %d unchanged.\n", s.NewlyBlocked, s.NewlyAllowed, s.Changed, s.Unchanged)
	}
	return nil
}

func renderChanges(w io.Writer, r *Report, o printers.TableOptions, name, title string, keep func(Change) bool) error {
	var rows []Change
	for _, c := range r.Changes {
		if keep(c) {
			rows = append(rows, c)
		}
	}
	if !o.Shows(name) || len(rows) == 0 {
		return nil
	}
	o.Title(w, "%s%s (%d)\n", o.Gap(), title, len(rows))
	t := o.NewTable(w, o.Columns([]string{"NAMESPACE", "NAME", "IN FORCE", "CANDIDATE"}, "ADDED", "REMOVED")...)
	for _, c := range rows {
		t.Row(o.Columns([]string{c.Namespace, c.displayName(), c.Before.String(), c.After.String()},
			strings.Join(missing(c.After.Codes, c.Before.Codes), ", "), strings.Join(missing(c.Before.Codes, c.After.Codes), ", "))...)
	}
	return t.Flush()
}

func renderPlanChanges(w io.Writer, r *Report, o printers.TableOptions) error {
	if !o.Shows("plans") || len(r.plans) == 0 {
		return nil
	}
	o.Title(w, "%sINSTALL PLANS WHOSE VERDICT CHANGES (%d)\n", o.Gap(), len(r.plans))
	t := o.NewTable(w, "NAMESPACE", "NAME", "IN FORCE", "CANDIDATE")
	for _, p := range r.plans {
		t.Row(p.key.Namespace, p.key.Name, planWord(p.before), planWord(p.after))
	}
	return t.Flush()
}

// missing is the codes of a that b lacks.
func missing(a, b []string) []string {
	var out []string
	for _, c := range a {
		if !slices.Contains(b, c) {
			out = append(out, c)
		}
	}
	return out
}

func planWord(v approval.Verdict) string {
	if v.Approvable {
		return "approve"
	}
	return v.WhyNot()
}

// displayName is a Subscription's name, or kind/name for another kind.
func (c Change) displayName() string {
	if c.Kind == "" {
		return c.Name
	}
	return strings.ToLower(c.Kind) + "/" + c.Name
}
