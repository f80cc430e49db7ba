package explain

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Printable is the report in every output format: -o name names its Subscription.
func (r *Report) Printable() printers.Printable {
	return printers.Printable{
		Doc:   r,
		Human: func(w io.Writer, _ printers.TableOptions) error { return r.WriteText(w) },
		Names: printers.Refs(v1alpha1.SubscriptionGroupKind, []*Report{r}, func(r *Report) string { return r.Name }),
	}
}

// WriteText prints the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	p := &printer{w: w}
	r.writeSubscription(p)
	p.blank()
	r.writeDecision(p)
	for i, d := range r.Denials {
		p.blank()
		p.denial(fmt.Sprintf("%d. ", i+1), d)
	}
	p.blank()
	r.writePlans(p)
	p.blank()
	p.line("Health of the operands of %s", orDefault(r.InstalledCSV, "the installed CSV"))
	p.conditions(r.Health)
	p.blank()
	p.line("Conditions")
	p.conditions(r.Conditions)
	r.writeNotes(p)
	return p.err
}

func (r *Report) writeSubscription(p *printer) {
	p.line("Subscription %s/%s", r.Namespace, r.Name)
	kv := printers.NewTable(p.w)
	if r.Package != "" {
		pkg := r.Package
		if r.Channel != "" {
			pkg += ", channel " + r.Channel
		}
		if r.SourceCatalog != "" {
			pkg += ", from catalog " + r.SourceCatalog
		}
		kv.Row("package", pkg)
	}
	installed := r.InstalledCSV
	if installed != "" && r.InstalledPhase != "" {
		installed += " (" + r.InstalledPhase + ")"
	}
	kv.Row("installed", installed)
	kv.Row("current", r.CurrentCSV)
	kv.Row("state", fmt.Sprintf("%s, up to date: %v", orDefault(r.State, "-"), yesNo(r.UpToDate)))
	kv.Row("approval", fmt.Sprintf("%s; gate mode %s", r.Approval, r.Mode))
	p.flush(kv)
}

func (r *Report) writeDecision(p *printer) {
	m, s := r.PolicyMismatch, r.Stored
	switch {
	case m != nil && m.Decision == DecisionOfManager && s != nil: // never explain's as the manager's
		p.line("Decision: %s (the manager's, as recorded in the UpgradeGate at %s with policy revision %s)", s.headline(), s.EvaluatedAt, s.PolicyRevision)
		p.line("  explain's own evaluation, with a different policy set (revision %s, at %s): %s", r.PolicyRevision, r.Now, r.headline())
	case m != nil:
		p.line("Decision: %s (explain's evaluation, not necessarily the manager's: the policy sets differ)", r.headline())
		p.line("  evaluated at %s with policy revision %s", r.Now, r.PolicyRevision)
	default:
		p.line("Decision: %s", r.headline())
		p.line("  evaluated at %s with policy revision %s", r.Now, r.PolicyRevision)
	}
	if s != nil && (m == nil || m.Decision != DecisionOfManager) {
		p.line("  the manager's last decision: %s (at %s, policy revision %s)", s.decision(), s.EvaluatedAt, s.PolicyRevision)
	}
	if s != nil && s.LastApproved != "" {
		p.line("  last InstallPlan Tollgate approved: %s", s.LastApproved)
	}
	r.writeMismatch(p)
	for _, n := range r.Notices {
		p.blank()
		p.line("Note: %s", wrap(n.Text, 100, "  "))
		if n.Command != "" {
			p.line("    %s", n.Command)
		}
	}
}

// writeMismatch names each difference between explain's policy set and the manager's.
func (r *Report) writeMismatch(p *printer) {
	m := r.PolicyMismatch
	if m == nil {
		return
	}
	text := "explain's policy set differs from the one the manager runs, so this evaluation may disagree with the manager's decision"
	switch {
	case m.Decision == DecisionOfManager:
		text = "explain cannot reproduce the policy set the manager runs, so the decision above is the one the manager recorded, " +
			"not explain's; explain's own evaluation and everything below it (denials, InstallPlans, conditions) come from explain's policy set and may differ from the manager's"
	case r.Stored == nil:
		text += ", and the gate records no decision of the manager's to show instead"
	}
	p.blank()
	p.line("Note: %s:", wrap(text, 100, "  "))
	for _, d := range m.Differences {
		p.line("  - %s", wrap(d.Message, 100, "    "))
	}
}

// headline is the stored decision as the headline of a report.
func (s *Stored) headline() string {
	if s.Allowed {
		return "ALLOWED"
	}
	return "HELD by " + orDefault(s.BlockedBy, "a denial")
}

// decision is the stored decision in a few words.
func (s *Stored) decision() string {
	if s.Allowed {
		return "allowed"
	}
	return "held by " + orDefault(s.BlockedBy, "a denial")
}

func (r *Report) writePlans(p *printer) {
	if len(r.InstallPlans) == 0 {
		p.line("InstallPlans waiting: none")
		return
	}
	p.line("InstallPlans waiting")
	t := printers.NewTable(p.w, "NAME", "CSVS", "APPROVE", "WHY NOT")
	for _, v := range r.InstallPlans {
		t.Row(v.Name, strings.Join(v.CSVs, ", "), yesNo(v.Approvable), v.WhyNot())
	}
	p.flush(t)
}

func (r *Report) writeNotes(p *printer) {
	if len(r.Notes) == 0 {
		return
	}
	p.blank()
	p.line("Trace notes")
	for _, n := range r.Notes {
		loc := ""
		if n.Location != "" {
			loc = n.Location + ": "
		}
		p.line("  [%s] %s%s", n.Kind, loc, n.Message)
	}
}

func (r *Report) headline() string {
	var codes []string
	for _, d := range r.Denials {
		if !d.Overridden {
			codes = append(codes, d.Code)
		}
	}
	switch {
	case !r.Allowed && len(codes) > 0:
		return fmt.Sprintf("HELD by %s (%s)", strings.Join(codes, ", "), text.Plural(len(codes), "denial stands", "denials stand"))
	case !r.Allowed:
		return "HELD (the policies did not allow it)"
	case r.CurrentCSV != "" && r.CurrentCSV != r.InstalledCSV:
		return fmt.Sprintf("ALLOWED: the upgrade to %s may proceed", r.CurrentCSV)
	default:
		return "ALLOWED: no denial stands"
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// printer writes lines and keeps the first error.
type printer struct {
	w      io.Writer
	indent string
	err    error
}

// rendered is text the printer laid out itself (a wrapped paragraph, whose words
// text.Wrap escaped): line prints it as is.
type rendered string

// wrap is text.Wrap for line.
func wrap(s string, width int, indent string) rendered {
	return rendered(text.Wrap(s, width, indent))
}

// line prints one line. Its string arguments come from the cluster, the policies or the
// admins, so each is escaped (text.Escape): no control character, tab or BiDi control
// reaches the terminal. Only rendered text keeps its line breaks.
func (p *printer) line(format string, args ...any) {
	safe := make([]any, 0, len(args))
	for _, a := range args {
		switch v := a.(type) {
		case rendered:
			a = string(v)
		case string:
			a = text.Escape(v)
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String { // a named string type
				a = text.Escape(rv.String())
			}
		}
		safe = append(safe, a)
	}
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, p.indent+format+"\n", safe...)
	}
}

func (p *printer) blank() {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w)
	}
}

func (p *printer) flush(t *printers.Table) {
	if p.err == nil {
		p.err = t.Flush()
	}
}

// denial prints one denial under its number: message, rule, facts, and remedies.
func (p *printer) denial(number string, d Denial) {
	head := number + d.Code
	if d.Overridden {
		head += " (overridden: does not hold the upgrade)"
	}
	p.line("%s", head)
	pad := strings.Repeat(" ", len(number))
	p.line("%s%s", pad, wrap(d.Message, 100, p.indent+pad))
	if d.File != "" {
		rule := fmt.Sprintf("%s:%d", d.File, d.Row)
		if d.Rule != "" {
			rule += " (" + d.Rule
			if d.Title != "" {
				rule += ": " + d.Title
			}
			rule += ")"
		}
		p.line("%srule:     %s", pad, rule)
	}
	if d.OverrideReason != "" {
		p.line("%swaived:   %s", pad, d.OverrideReason)
	}
	p.items(pad+"facts:    ", d.Facts)
	p.remedies(pad+"to lift:  ", d.Lift)
}

// item prints the i-th entry of a labelled list: the label on the first line, aligned
// continuation below.
func (p *printer) item(i int, label, text string) {
	pad := strings.Repeat(" ", len(label))
	first := pad
	if i == 0 {
		first = label
	}
	p.line("%s- %s", first, wrap(text, 100, p.indent+pad+"  "))
}

// items prints a labelled list.
func (p *printer) items(label string, items []string) {
	for i, it := range items {
		p.item(i, label, it)
	}
}

// remedies prints each remedy's text wrapped and its command on a line of its own, unwrapped,
// so it can be copied; a remedy that points at another Subscription lists what holds it.
func (p *printer) remedies(label string, rs []Remedy) {
	pad := strings.Repeat(" ", len(label))
	for i, r := range rs {
		p.item(i, label, r.Text)
		if r.Command != "" {
			p.line("%s    %s", pad, r.Command)
		}
		nested := &printer{w: p.w, indent: p.indent + pad + "    ", err: p.err}
		for _, d := range r.Held {
			nested.denial("held by ", d)
		}
		p.err = nested.err
	}
}

func (p *printer) conditions(cs []engine.Condition) {
	t := printers.NewTable(p.w, "TYPE", "STATUS", "REASON", "MESSAGE")
	for _, c := range cs {
		t.Row(c.Type, string(c.Status), c.Reason, c.Message)
	}
	p.flush(t)
}
