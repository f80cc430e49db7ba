package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/statusreport"
)

type statusFlags struct {
	cluster  kubeconn.Flags
	all      bool
	snapshot []string
	policyNS string
	limit    int
	now      string
	output   *printers.PrintFlags
}

func newStatusCommand() *cobra.Command {
	f := statusFlags{output: printers.NewPrintFlags("table", "wide", "json", "yaml", "name").WithTables(statusreport.Tables...)}
	cmd := &cobra.Command{
		Use:   "status [-n NAMESPACE | -A]",
		Short: "Summarise what Tollgate holds: gates by state and code, bypasses, the longest holds, plans, policy health",
		Long: `Read the UpgradeGates (what the manager decided and recorded; nothing is evaluated again), the
InstallPlans and the policy ConfigMaps, and print:

  - the gates by state (allowed, held, no decision yet);
  - every bypass a gate records, newest first: a plan approved or a pin moved by someone
    else than Tollgate, by which field manager and when, and what the gate said then;
  - the held gates by denial code;
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
		RunE: runs(f.run),
	}
	f.cluster.AddFlags(cmd)
	cmd.Flags().Lookup("namespace").Usage = "only this namespace's gates and plans (default: all namespaces)"
	f.cluster.AddAllNamespaces(cmd, &f.all, "every namespace's gates and plans (the default without -n)")
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "read this YAML/JSON file or folder of cluster state instead of the live cluster (repeatable)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy)")
	cmd.Flags().IntVar(&f.limit, "limit", 10, "how many of the longest holds to list")
	cmd.Flags().StringVar(&f.now, "now", "", "the current time for the hold durations, RFC 3339 (default: now)")
	f.output.AddFlags(cmd)
	return cmd
}

func (f *statusFlags) run(ctx context.Context, stdout, _ io.Writer, _ []string) error {
	if err := f.output.Validate(); err != nil {
		return err
	}
	if f.limit < 0 {
		return errors.New("--limit must be 0 or more")
	}
	now, err := parseNow(f.now)
	if err != nil {
		return err
	}
	r, scope, err := f.cluster.Reader(ctx, f.snapshot, nil)
	if err != nil {
		return err
	}
	rep, err := statusreport.Read(ctx, r, statusreport.Options{
		Namespace: f.cluster.Namespace(), PolicyNamespace: f.policyNS, Limit: f.limit, Now: now, Scope: scope,
	})
	if err != nil {
		return err
	}
	return f.output.Print(stdout, rep.Printable())
}
