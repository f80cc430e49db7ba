package main

import (
	"fmt"
	"io"
	"strings"
)

// renderEvalTable prints an eval report for a person: one line per Subscription, InstallPlan
// and CatalogSource, and the denials under their Subscription.
func renderEvalTable(w io.Writer, r *evalReport) error {
	fmt.Fprintf(w, "Evaluated at %s with policy revision %s.\n\n", r.Now, r.PolicyRevision)

	fmt.Fprintf(w, "SUBSCRIPTIONS (%d)\n", len(r.Subscriptions))
	t := newTable(w, "NAMESPACE", "NAME", "PACKAGE", "INSTALLED", "CURRENT", "STATE", "APPROVAL", "MODE", "UPGRADE")
	for _, s := range r.Subscriptions {
		t.row(s.Namespace, s.Name, s.Package, s.InstalledCSV, s.CurrentCSV, s.State, s.Approval, s.Mode, verdictWord(s.Decision))
	}
	if err := t.flush(); err != nil {
		return err
	}

	var denied []subscriptionEval
	for _, s := range r.Subscriptions {
		if len(s.Decision.Denials) > 0 {
			denied = append(denied, s)
		}
	}
	if len(denied) > 0 {
		fmt.Fprintf(w, "\nDENIALS\n")
		for _, s := range denied {
			fmt.Fprintf(w, "  %s/%s\n", s.Namespace, s.Name)
			for _, d := range s.Decision.Denials {
				mark := ""
				if d.Overridden {
					mark = " (overridden)"
				}
				fmt.Fprintf(w, "    %s%s: %s\n", d.Code, mark, wrap(d.Message, 96, "      "))
				if d.Source != "" {
					fmt.Fprintf(w, "      from %s\n", d.Source)
				}
			}
		}
	}

	fmt.Fprintf(w, "\nINSTALL PLANS (%d)\n", len(r.InstallPlans))
	if len(r.InstallPlans) > 0 {
		t = newTable(w, "NAMESPACE", "NAME", "APPROVE", "CSVS", "WHY NOT")
		for _, p := range r.InstallPlans {
			approve, why := p.answer()
			t.row(p.Namespace, p.Name, approve, strings.Join(p.CSVs, ", "), why)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nCATALOG SOURCES (%d)\n", len(r.CatalogSources))
	if len(r.CatalogSources) > 0 {
		t = newTable(w, "NAMESPACE", "NAME", "HEALTHY", "VALID", "PROBLEMS")
		for _, c := range r.CatalogSources {
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
			t.row(c.Namespace, c.Name, healthy, valid, strings.Join(problems, "; "))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(denied) > 0 {
		fmt.Fprintf(w, "\nFor what would lift a denial: tollgate explain --snapshot PATH -n NAMESPACE SUBSCRIPTION\n")
	}
	return nil
}

// verdictWord is the UPGRADE column: allowed, or held by the first standing code.
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
