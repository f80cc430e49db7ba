package evaluation

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Printable is the report in every output format: -o name lists the Subscriptions. self is
// how the reader runs tollgate, for the commands the table suggests.
func (r *Report) Printable(self string) printers.Printable {
	return printers.Printable{
		Doc:   r,
		Human: func(w io.Writer, o printers.TableOptions) error { return r.WriteTable(w, o, self) },
		Names: printers.Refs(v1alpha1.SubscriptionGroupKind, r.Subscriptions, func(s Subscription) string { return s.Name }),
	}
}

// WriteTable prints the report for a person: one line per Subscription, InstallPlan
// and CatalogSource, and the denials under their Subscription. Text from the snapshot and
// the policies is escaped (text.Escape; the tables escape their cells). -o wide adds
// whether each Subscription is up to date and its overridden codes; o.Only picks one table
// (--only), and --no-headers then prints its rows alone. self is the command line's
// program ("tollgate", "kubectl tollgate"), for the explain hint under denials.
func (r *Report) WriteTable(w io.Writer, o printers.TableOptions, self string) error {
	switch o.Only {
	case "subscriptions":
		return renderSubscriptions(w, r, o)
	case "plans":
		return renderPlans(w, r, o, "")
	case "catalogs":
		return renderCatalogs(w, r.CatalogSources, o, "")
	case "extensions":
		return renderExtensions(w, r.Extensions, o, "")
	}
	o.Title(w, "Evaluated at %s with policy revision %s.\n\n", text.Escape(r.Now), text.Escape(r.PolicyRevision))
	if len(r.Extensions) > 0 && len(r.Subscriptions) == 0 { // OLM v1 alone
		return renderExtensionReport(w, r.Extensions, o, "")
	}
	if len(r.Subscriptions) == 0 { // a snapshot of CatalogSources alone: only they are checked
		return renderCatalogs(w, r.CatalogSources, o, "")
	}
	if err := renderSubscriptions(w, r, o); err != nil {
		return err
	}
	denied := !o.NoHeaders && renderDenials(w, r.Subscriptions)
	if err := renderPlans(w, r, o, "\n"); err != nil {
		return err
	}
	if err := renderCatalogs(w, r.CatalogSources, o, "\n"); err != nil {
		return err
	}
	if len(r.Extensions) > 0 {
		if err := renderExtensionReport(w, r.Extensions, o, "\n"); err != nil {
			return err
		}
	}
	if denied {
		fmt.Fprintf(w, "\nFor what would lift a denial: %s explain --snapshot PATH -n NAMESPACE SUBSCRIPTION\n", self)
	}
	return nil
}

func renderSubscriptions(w io.Writer, r *Report, o printers.TableOptions) error {
	o.Title(w, "SUBSCRIPTIONS (%d)\n", len(r.Subscriptions))
	t := o.NewTable(w, o.Columns([]string{"NAMESPACE", "NAME", "PACKAGE", "INSTALLED", "CURRENT", "STATE", "APPROVAL", "MODE", "UPGRADE"}, "UP TO DATE", "OVERRIDDEN")...)
	for _, s := range r.Subscriptions {
		t.Row(o.Columns([]string{s.Namespace, s.Name, s.Package, s.InstalledCSV, s.CurrentCSV, s.State, s.Approval, s.Mode, verdictWord(s.Decision)},
			yesNo(s.UpToDate), strings.Join(s.Decision.OverriddenCodes(), ", "))...)
	}
	return t.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// renderDenials lists the denials of each Subscription that has any, and says whether any did.
func renderDenials(w io.Writer, subs []Subscription) bool {
	any := false
	for _, s := range subs {
		if len(s.Decision.Denials) == 0 {
			continue
		}
		if !any {
			fmt.Fprintf(w, "\nDENIALS\n")
			any = true
		}
		if s.Namespace == "" { // a cluster-scoped ClusterExtension
			fmt.Fprintf(w, "  %s\n", text.Escape(s.Name))
		} else {
			fmt.Fprintf(w, "  %s/%s\n", text.Escape(s.Namespace), text.Escape(s.Name))
		}
		for _, d := range s.Decision.Denials {
			mark := ""
			if d.Overridden {
				mark = " (overridden)"
			}
			fmt.Fprintf(w, "    %s%s: %s\n", text.Escape(d.Code), mark, text.Wrap(d.Message, 96, "      "))
			if d.Source != "" {
				fmt.Fprintf(w, "      from %s\n", text.Escape(d.Source))
			}
		}
	}
	return any
}

// renderPlans prints the InstallPlans table, its title after gap.
func renderPlans(w io.Writer, r *Report, o printers.TableOptions, gap string) error {
	o.Title(w, gap+"INSTALL PLANS (%d)\n", len(r.InstallPlans))
	if len(r.InstallPlans) == 0 {
		return nil
	}
	t := o.NewTable(w, "NAMESPACE", "NAME", "APPROVE", "CSVS", "WHY NOT")
	for _, v := range r.InstallPlans {
		t.Row(v.Namespace, v.Name, yesNo(v.Approvable), strings.Join(v.CSVs, ", "), v.WhyNot())
	}
	return t.Flush()
}

// renderCatalogs prints the CatalogSources table, its title after gap.
func renderCatalogs(w io.Writer, catalogs []CatalogSource, o printers.TableOptions, gap string) error {
	o.Title(w, gap+"CATALOG SOURCES (%d)\n", len(catalogs))
	if len(catalogs) == 0 {
		return nil
	}
	t := o.NewTable(w, "NAMESPACE", "NAME", "HEALTHY", "VALID", "PROBLEMS")
	for _, c := range catalogs {
		healthy := c.Healthy
		if c.LastObservedState != "" {
			healthy += " (" + c.LastObservedState + ")"
		}
		var problems []string
		for _, v := range c.Violations {
			problems = append(problems, v.Field+": "+v.Message)
		}
		t.Row(c.Namespace, c.Name, healthy, yesNo(c.Valid), strings.Join(problems, "; "))
	}
	return t.Flush()
}

// verdictWord is the UPGRADE column: allowed, or held by the standing codes.
func verdictWord(d Decision) string {
	if d.Allowed {
		return "allowed"
	}
	codes := d.StandingCodes()
	if len(codes) == 0 {
		return "denied"
	}
	return "held: " + strings.Join(codes, ", ")
}
