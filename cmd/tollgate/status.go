package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/policysource"
	"github.com/tollgate-dev/tollgate/printers"
	"github.com/tollgate-dev/tollgate/statusreport"
)

func init() { extraCommands = append(extraCommands, newStatusCommand) }

type statusFlags struct {
	cluster  clusterFlags
	all      bool
	snapshot []string
	policyNS string
	limit    int
	now      string
	output   *outputFlags
}

func newStatusCommand() *cobra.Command {
	f := statusFlags{output: newOutputFlags("table", "wide", "json", "yaml", "name").withTables(statusTables...)}
	cmd := &cobra.Command{
		Use:   "status [-n NAMESPACE | -A]",
		Short: "Summarise what Tollgate holds: gates by state and code, the longest holds, plans, policy health",
		Long: `Read the UpgradeGates (what the manager decided and recorded; nothing is evaluated again), the
InstallPlans and the policy ConfigMaps, and print:

  - the gates by state (allowed, held, no decision yet) and the held ones by denial code;
  - the upgrades held longest (--limit), since when (the UpgradeBlocked condition's
    lastTransitionTime, else status.decision.evaluatedAt) and by which code and message;
  - the pending InstallPlans, and those awaiting approval;
  - the policy revision in force (the one most gates were decided with; on a tie the newest)
    and the health of every policy ConfigMap, from the manager's tollgate.dev/policy-status
    annotation (status, which version is serving: current, previous or none, and errors).

It reads the live cluster (all namespaces, as with -A; -n narrows to one), or a snapshot with --snapshot ('tollgate
snapshot' captures the gates and the policy ConfigMaps).`,
		Example: `  # what is Tollgate holding, cluster-wide?
  tollgate status

  # one namespace, the 3 longest holds, as JSON
  tollgate status -n operators --limit 3 -o json

  # the held gates, one kind/name a line (kubectl describe takes them)
  tollgate status -o name

  # the codes holding upgrades, and how many gates each holds
  tollgate status -o jsonpath='{range .byCode[*]}{.code}{"\t"}{.gates}{"\n"}{end}'

  # from a snapshot attached to a bug report
  tollgate status --snapshot state.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	f.cluster.bind(cmd)
	cmd.Flags().Lookup("namespace").Usage = "only this namespace's gates and plans (default: all namespaces)"
	cmd.Flags().BoolVarP(&f.all, "all-namespaces", "A", false, "every namespace's gates and plans (the default without -n)")
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "read this YAML/JSON file or folder of cluster state instead of the live cluster (repeatable)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy)")
	cmd.Flags().IntVar(&f.limit, "limit", 10, "how many of the longest holds to list")
	cmd.Flags().StringVar(&f.now, "now", "", "the current time for the hold durations, RFC 3339 (default: now)")
	f.output.bind(cmd)
	return cmd
}

func runStatus(ctx context.Context, stdout io.Writer, f statusFlags) error {
	if err := f.output.validate(); err != nil {
		return err
	}
	if f.limit < 0 {
		return errors.New("--limit must be 0 or more")
	}
	if f.all && f.cluster.namespace() != "" {
		return errors.New("give either -n NAMESPACE or -A, not both")
	}
	now, err := parseNow(f.now)
	if err != nil {
		return err
	}
	r, scope, err := f.cluster.reader(ctx, f.snapshot, nil)
	if err != nil {
		return err
	}
	rep, err := statusreport.Read(ctx, r, statusreport.Options{
		Namespace: f.cluster.namespace(), PolicyNamespace: f.policyNS, Limit: f.limit, Now: now, Scope: scope,
	})
	if err != nil {
		return err
	}
	return f.output.print(stdout, statusPrintable(rep))
}

// statusPrintable is the report in every output format: -o name lists the longest-held gates.
func statusPrintable(rep *statusreport.Report) printable {
	return printable{
		doc:   rep,
		human: func(w io.Writer, o printers.TableOptions) error { return renderStatusTable(w, rep, o) },
		names: func() []printers.Ref {
			refs := make([]printers.Ref, len(rep.HeldLongest))
			for i, h := range rep.HeldLongest {
				refs[i] = printers.Ref{GroupKind: upgradeGateKind, Name: h.Name}
			}
			return refs
		},
	}
}

// statusTables are the tables of status's -o table and wide, as --only names them.
var statusTables = []string{"codes", "holds", "plans", "policy"}

// renderStatusTable prints the status report for a person. -o wide adds the policy revision
// of each long hold; o.Only picks one table.
func renderStatusTable(w io.Writer, rep *statusreport.Report, o printers.TableOptions) error {
	if o.Whole() {
		renderGateCounts(w, rep, o)
	}
	for _, table := range []func(io.Writer, *statusreport.Report, printers.TableOptions) error{renderByCode, renderHolds, renderAwaitingPlans, renderPolicyHealth} {
		if err := table(w, rep, o); err != nil {
			return err
		}
	}
	return nil
}

func renderGateCounts(w io.Writer, rep *statusreport.Report, o printers.TableOptions) {
	g := rep.Gates
	o.Title(w, "Tollgate status of %s at %s.\n\n", printers.Escape(rep.Scope), rep.Now)
	o.Title(w, "GATES  %d: %d allowed, %d held, %d without a decision yet", g.Total, g.Allowed, g.Held, g.NoDecision)
	if rep.SubscriptionsWithoutGate > 0 {
		o.Title(w, "; %d Subscription(s) have no gate yet", rep.SubscriptionsWithoutGate)
	}
	o.Title(w, "\n")
}

func renderByCode(w io.Writer, rep *statusreport.Report, o printers.TableOptions) error {
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

func renderHolds(w io.Writer, rep *statusreport.Report, o printers.TableOptions) error {
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

func renderAwaitingPlans(w io.Writer, rep *statusreport.Report, o printers.TableOptions) error {
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

func renderPolicyHealth(w io.Writer, rep *statusreport.Report, o printers.TableOptions) error {
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
			others = append(others, fmt.Sprintf("%s on %d", printers.Escape(rc.Revision), rc.Gates))
		}
		o.Title(w, "  revision in force: %s (%d gate(s))", printers.Escape(p.Revision), p.Revisions[0].Gates)
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
