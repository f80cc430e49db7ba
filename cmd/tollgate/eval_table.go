package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/printers"
)

// renderEvalTable prints an eval report for a person: one line per Subscription, InstallPlan
// and CatalogSource, and the denials under their Subscription. Text from the snapshot and
// the policies is escaped (printers.Escape; the tables escape their cells).
func renderEvalTable(w io.Writer, r *evalReport) error {
	fmt.Fprintf(w, "Evaluated at %s with policy revision %s.\n\n", printers.Escape(r.Now), printers.Escape(r.PolicyRevision))
	fmt.Fprintf(w, "SUBSCRIPTIONS (%d)\n", len(r.Subscriptions))
	t := printers.NewTable(w, "NAMESPACE", "NAME", "PACKAGE", "INSTALLED", "CURRENT", "STATE", "APPROVAL", "MODE", "UPGRADE")
	for _, s := range r.Subscriptions {
		t.Row(s.Namespace, s.Name, s.Package, s.InstalledCSV, s.CurrentCSV, s.State, s.Approval, s.Mode, verdictWord(s.Decision))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	denied := renderDenials(w, r.Subscriptions)
	if err := renderPlans(w, r); err != nil {
		return err
	}
	if err := renderCatalogs(w, r.CatalogSources); err != nil {
		return err
	}
	if denied {
		fmt.Fprintf(w, "\nFor what would lift a denial: tollgate explain --snapshot PATH -n NAMESPACE SUBSCRIPTION\n")
	}
	return nil
}

// renderDenials lists the denials of each Subscription that has any, and says whether any did.
func renderDenials(w io.Writer, subs []subscriptionEval) bool {
	any := false
	for _, s := range subs {
		if len(s.Decision.Denials) == 0 {
			continue
		}
		if !any {
			fmt.Fprintf(w, "\nDENIALS\n")
			any = true
		}
		fmt.Fprintf(w, "  %s/%s\n", printers.Escape(s.Namespace), printers.Escape(s.Name))
		for _, d := range s.Decision.Denials {
			mark := ""
			if d.Overridden {
				mark = " (overridden)"
			}
			fmt.Fprintf(w, "    %s%s: %s\n", printers.Escape(d.Code), mark, printers.Wrap(d.Message, 96, "      "))
			if d.Source != "" {
				fmt.Fprintf(w, "      from %s\n", printers.Escape(d.Source))
			}
		}
	}
	return any
}

func renderPlans(w io.Writer, r *evalReport) error {
	fmt.Fprintf(w, "\nINSTALL PLANS (%d)\n", len(r.InstallPlans))
	if len(r.InstallPlans) == 0 {
		return nil
	}
	t := printers.NewTable(w, "NAMESPACE", "NAME", "APPROVE", "CSVS", "WHY NOT")
	for _, v := range r.InstallPlans {
		approve := "no"
		if v.Approvable {
			approve = "yes"
		}
		t.Row(v.Namespace, v.Name, approve, strings.Join(v.CSVs, ", "), v.WhyNot())
	}
	return t.Flush()
}

func renderCatalogs(w io.Writer, catalogs []catalogSourceEval) error {
	fmt.Fprintf(w, "\nCATALOG SOURCES (%d)\n", len(catalogs))
	if len(catalogs) == 0 {
		return nil
	}
	t := printers.NewTable(w, "NAMESPACE", "NAME", "HEALTHY", "VALID", "PROBLEMS")
	for _, c := range catalogs {
		healthy := c.Healthy
		if c.LastObservedState != "" {
			healthy += " (" + c.LastObservedState + ")"
		}
		valid := "yes"
		if !c.Valid {
			valid = "no"
		}
		var problems []string
		for _, v := range c.Violations {
			problems = append(problems, v.Field+": "+v.Message)
		}
		t.Row(c.Namespace, c.Name, healthy, valid, strings.Join(problems, "; "))
	}
	return t.Flush()
}

// verdictWord is the UPGRADE column: allowed, or held by the standing codes.
func verdictWord(d decisionEval) string {
	if d.Allowed {
		return "allowed"
	}
	var codes []string
	for _, den := range d.Denials {
		if !den.Overridden {
			codes = append(codes, den.Code)
		}
	}
	if len(codes) == 0 {
		return "denied"
	}
	return "held: " + strings.Join(codes, ", ")
}
