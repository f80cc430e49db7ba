package statusreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Tables are the tables of the report's table, as TableOptions.Only names them.
var Tables = []string{"bypasses", "codes", "holds", "plans", "extensions", "policy"}

// Printable is the report in every output format: -o name lists the longest-held gates.
func (rep *Report) Printable() printers.Printable {
	gate := tollgatev1alpha1.GroupVersion.WithKind("UpgradeGate").GroupKind()
	return printers.Printable{Doc: rep, Human: rep.WriteTable, Names: printers.Refs(gate, rep.HeldLongest, func(h HeldGate) string { return h.Name })}
}

// WriteTable prints the report for a person. -o wide adds the policy revision
// of each long hold; o.Only picks one table.
func (rep *Report) WriteTable(w io.Writer, o printers.TableOptions) error {
	if o.Whole() {
		renderGateCounts(w, rep, o)
	}
	for _, table := range []func(io.Writer, *Report, printers.TableOptions) error{renderBypasses, renderByCode, renderHolds, renderAwaitingPlans, renderExtensionGates, renderPolicyHealth} {
		if err := table(w, rep, o); err != nil {
			return err
		}
	}
	return nil
}

func renderGateCounts(w io.Writer, rep *Report, o printers.TableOptions) {
	g := rep.Gates
	o.Title(w, "Tollgate status of %s at %s.\n\n", text.Escape(rep.Scope), rep.Now)
	o.Title(w, "GATES  %d: %d allowed, %d held, %d without a decision yet", g.Total, g.Allowed, g.Held, g.NoDecision)
	if rep.SubscriptionsWithoutGate > 0 {
		o.Title(w, "; %d Subscription(s) have no gate yet", rep.SubscriptionsWithoutGate)
	}
	o.Title(w, "\n")
}

func renderByCode(w io.Writer, rep *Report, o printers.TableOptions) error {
	if !o.Shows("codes") || len(rep.ByCode) == 0 {
		return nil
	}
	o.Title(w, "%sHELD BY CODE\n", o.Gap())
	t := o.NewTable(w, "CODE", "GATES")
	for _, c := range rep.ByCode {
		t.Row(c.Code, fmt.Sprint(c.Gates))
	}
	return t.Flush()
}

func renderHolds(w io.Writer, rep *Report, o printers.TableOptions) error {
	if !o.Shows("holds") || len(rep.HeldLongest) == 0 {
		return nil
	}
	now, _ := time.Parse(time.RFC3339, rep.Now)
	o.Title(w, "%sHELD LONGEST (%d of %d)\n", o.Gap(), len(rep.HeldLongest), rep.Gates.Held)
	t := o.NewTable(w, o.Columns([]string{"NAMESPACE", "NAME", "HELD SINCE", "FOR", "CODE", "MESSAGE"}, "POLICY REVISION")...)
	for _, h := range rep.HeldLongest {
		since, held := "unknown", ""
		if !h.Start.IsZero() {
			since, held = h.Since, humanDuration(now.Sub(h.Start))
		}
		t.Row(o.Columns([]string{h.Namespace, h.Name, since, held, h.Code, h.Message}, h.PolicyRevision)...)
	}
	return t.Flush()
}

func renderAwaitingPlans(w io.Writer, rep *Report, o printers.TableOptions) error {
	if !o.Shows("plans") {
		return nil
	}
	p := rep.InstallPlans
	o.Title(w, "%sINSTALL PLANS  %d pending, %d awaiting approval\n", o.Gap(), p.Pending, p.AwaitingApproval)
	if len(p.Awaiting) == 0 {
		return nil
	}
	t := o.NewTable(w, "NAMESPACE", "NAME", "CSVS")
	for _, a := range p.Awaiting {
		t.Row(a.Namespace, a.Name, strings.Join(a.CSVs, ", "))
	}
	return t.Flush()
}

func renderPolicyHealth(w io.Writer, rep *Report, o printers.TableOptions) error {
	if !o.Shows("policy") {
		return nil
	}
	p := rep.Policy
	o.Title(w, "%sPOLICY\n", o.Gap())
	switch len(p.Revisions) {
	case 0:
		o.Title(w, "  revision in force: unknown (no gate records a decision)\n")
	default:
		others := make([]string, 0, len(p.Revisions)-1)
		for _, rc := range p.Revisions[1:] {
			others = append(others, fmt.Sprintf("%s on %d", text.Escape(rc.Revision), rc.Gates))
		}
		o.Title(w, "  revision in force: %s (%d gate(s))", text.Escape(p.Revision), p.Revisions[0].Gates)
		if len(others) > 0 {
			o.Title(w, "; older decisions: %s", strings.Join(others, ", "))
		}
		o.Title(w, "\n")
	}
	if len(p.Sources) == 0 {
		o.Title(w, "  no policy ConfigMap: the embedded policies (and bundles) only\n")
		return nil
	}
	t := o.NewTable(w, "CONFIGMAP", "KIND", "STATUS", "SERVING", "ERRORS")
	for _, s := range p.Sources {
		t.Row(s.Name, s.Kind, s.Status, s.Serving, strings.Join(s.Errors, "; "))
	}
	return t.Flush()
}

// humanDuration is d in days, hours and minutes: 2d3h, 5h12m, 4m.
func humanDuration(d time.Duration) string {
	if d < 0 {
		return "0m"
	}
	days, hours, mins := int(d.Hours())/24, int(d.Hours())%24, int(d.Minutes())%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	}
	return fmt.Sprintf("%dm", mins)
}
