package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/engine"
)

// renderExplanation prints an explanation for a person. `tollgate explain` and `tollgate
// demo` share it.
func renderExplanation(w io.Writer, r *explainReport) error {
	p := &printer{w: w}
	p.line("Subscription %s/%s", r.Namespace, r.Name)
	kv := newTable(w)
	if r.Package != "" {
		pkg := r.Package
		if r.Channel != "" {
			pkg += ", channel " + r.Channel
		}
		if r.SourceCatalog != "" {
			pkg += ", from catalog " + r.SourceCatalog
		}
		kv.row("package", pkg)
	}
	installed := r.InstalledCSV
	if installed != "" && r.InstalledPhase != "" {
		installed += " (" + r.InstalledPhase + ")"
	}
	kv.row("installed", installed)
	kv.row("current", r.CurrentCSV)
	kv.row("state", fmt.Sprintf("%s, up to date: %v", orDefault(r.State, "-"), yesNo(r.UpToDate)))
	kv.row("approval", fmt.Sprintf("%s; gate mode %s", r.Approval, r.Mode))
	p.flush(kv)

	p.blank()
	p.line("Decision: %s", decisionHeadline(r))
	p.line("  evaluated at %s with policy revision %s", r.Now, r.PolicyRevision)
	if s := r.Stored; s != nil {
		stored := "allowed"
		if !s.Allowed {
			stored = "held by " + orDefault(s.BlockedBy, "a denial")
		}
		p.line("  the manager's last decision: %s (at %s, policy revision %s)", stored, s.EvaluatedAt, s.PolicyRevision)
		if s.LastApproved != "" {
			p.line("  last InstallPlan Tollgate approved: %s", s.LastApproved)
		}
	}
	for _, n := range r.Notices {
		p.blank()
		p.line("Note: %s", wrap(n.Text, 100, "  "))
		if n.Command != "" {
			p.line("    %s", n.Command)
		}
	}

	for i, d := range r.Denials {
		p.blank()
		head := fmt.Sprintf("%d. %s", i+1, d.Code)
		if d.Overridden {
			head += " (overridden: does not hold the upgrade)"
		}
		p.line("%s", head)
		p.line("   %s", wrap(d.Message, 100, "   "))
		if d.File != "" {
			rule := fmt.Sprintf("%s:%d", d.File, d.Row)
			if d.Rule != "" {
				rule += " (" + d.Rule
				if d.Title != "" {
					rule += ": " + d.Title
				}
				rule += ")"
			}
			p.line("   rule:     %s", rule)
		}
		p.items("   facts:    ", d.Facts)
		p.remedies("   to lift:  ", d.Lift)
	}

	p.blank()
	if len(r.InstallPlans) == 0 {
		p.line("InstallPlans waiting: none")
	} else {
		p.line("InstallPlans waiting")
		t := newTable(w, "NAME", "CSVS", "APPROVE", "WHY NOT")
		for _, ip := range r.InstallPlans {
			approve, why := ip.answer()
			t.row(ip.Name, strings.Join(ip.CSVs, ", "), approve, why)
		}
		p.flush(t)
	}

	p.blank()
	p.line("Health of the operands of %s", orDefault(r.InstalledCSV, "the installed CSV"))
	p.conditions(r.Health)
	p.blank()
	p.line("Conditions")
	p.conditions(r.Conditions)

	if len(r.Notes) > 0 {
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
	return p.err
}

func decisionHeadline(r *explainReport) string {
	standing := 0
	var codes []string
	for _, d := range r.Denials {
		if !d.Overridden {
			standing++
			codes = append(codes, d.Code)
		}
	}
	switch {
	case !r.Allowed && standing > 0:
		return fmt.Sprintf("HELD by %s (%s)", strings.Join(codes, ", "), plural(standing, "denial stands", "denials stand"))
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
	w   io.Writer
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) blank() { p.line("") }

func (p *printer) flush(t *table) {
	if p.err == nil {
		p.err = t.flush()
	}
}

// items prints a labelled list: the label on the first line, aligned continuation below.
func (p *printer) items(label string, items []string) {
	pad := strings.Repeat(" ", len(label))
	for i, it := range items {
		l := pad
		if i == 0 {
			l = label
		}
		p.line("%s- %s", l, wrap(it, 100, pad+"  "))
	}
}

// remedies prints each remedy's text wrapped and its command on a line of its own, unwrapped,
// so it can be copied.
func (p *printer) remedies(label string, rs []remedy) {
	pad := strings.Repeat(" ", len(label))
	for i, r := range rs {
		l := pad
		if i == 0 {
			l = label
		}
		p.line("%s- %s", l, wrap(r.Text, 100, pad+"  "))
		if r.Command != "" {
			p.line("%s    %s", pad, r.Command)
		}
	}
}

func (p *printer) conditions(cs []engine.Condition) {
	t := newTable(p.w, "TYPE", "STATUS", "REASON", "MESSAGE")
	for _, c := range cs {
		t.row(c.Type, string(c.Status), c.Reason, c.Message)
	}
	p.flush(t)
}
