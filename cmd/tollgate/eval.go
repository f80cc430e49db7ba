package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// exitDenied is the exit code of `eval --fail-on-deny` when a Subscription is denied.
const exitDenied = 3

type evalFlags struct {
	snapshot   []string
	policy     policyFlags
	decision   decisionFlags
	output     *printers.PrintFlags
	failOnDeny bool
	// failOnInvalidCatalog exits with exitDenied when a CatalogSource is invalid.
	failOnInvalidCatalog bool
	replay               string // a decision log to re-evaluate (replay.go)
}

// evalTables are the tables of eval's -o table and wide, as --only names them.
var evalTables = []string{"subscriptions", "plans", "catalogs", "extensions"}

func newEvalCommand() *cobra.Command {
	f := evalFlags{output: printers.NewPrintFlags("table", "wide", "json", "yaml", "name").WithTables(evalTables...)}
	cmd := &cobra.Command{
		Use:   "eval --snapshot PATH",
		Short: "Evaluate the policies on a snapshot of cluster state, without a cluster",
		Long: `Evaluate every Subscription in a snapshot with the same input builder, policies, approval
rule and status builder as the manager, and say which InstallPlans Tollgate would approve.

PATH is a YAML or JSON file (multi-document, or a List) or a folder of them, holding the objects
'kubectl get -o yaml' or 'tollgate snapshot' prints ('-' reads standard input). A document that
cannot be read as what it claims is an error naming its file, document, line and field: nothing is
decided on part of a snapshot. Kinds Tollgate does not read (operands of any CRD) are kept as they are.

A Subscription without an UpgradeGate gets a new one, as the manager would create it. A plan is
approved only when it is Manual, not yet approved, waiting in RequiresApproval, a Subscription
waits on it, and every move it makes is allowed: each CSV it creates, from each CSV of the
namespace it replaces (up the replacement chain) or from nothing, judged on the document of each
Subscription that wants it (Manual, gate in Enforce mode; or the dependency the plan creates)
and of each one that owns a CSV it replaces.

A snapshot of CatalogSources alone (no Subscription) checks the catalogs before they reach a
cluster: each one's validity and the fields at fault.

OLM v1: every ClusterExtension of the snapshot is decided as the manager decides an
ExtensionGate's: the successors of its installed bundle that OLM v1 would take, in the catalogs
its selector selects, each judged by the policies, and the pin Tollgate would set (the highest
allowed, else the installed version). Catalog content comes from the snapshot (kind
CatalogContent, which 'tollgate snapshot' writes); a catalog whose content it lacks, or holds at
another digest, holds every upgrade. A snapshot holding none of these kinds is an error.

Exit status: 0 when the evaluation ran (whatever it decided); 1 on an error (unreadable
snapshot, policies that do not compile); 3 with --fail-on-deny when any Subscription's upgrade
is denied, and with --fail-on-invalid-catalog when any CatalogSource is invalid.

With --replay FILE instead of --snapshot, it re-evaluates the decisions a manager logged with
--decision-log, each from its logged input (which holds its clock, input.now), and says which
come out differently: exit status 3 when any does, or when an event's input is not the one its
input_digest and input_sha256 were taken of (edited after it was logged, its clock included:
INPUT EDITED, never "same"). There is no cluster, so the policy ConfigMaps are not read: pass
their modules with --policy-dir. --now, --default-mode and --global-catalog-namespace do not
apply: the logged input holds them.`,
		Example: `  # what would Tollgate decide on the state a colleague attached to a bug report?
  tollgate eval --snapshot state.yaml

  # test your own rules in CI: extra or replacing .rego files, a fixed clock, fail on a denial
  tollgate eval --snapshot test/states/ --policy-dir policy/ --now 2026-11-20T12:00:00Z --fail-on-deny

  # with a policy pack, as JSON for jq
  tollgate eval --snapshot state.yaml --bundle bundles/packs/window -o json | jq '.installPlans[] | select(.approve)'

  # check a CatalogSource in CI before applying it
  tollgate eval --snapshot catalogsource.yaml --fail-on-invalid-catalog

  # the InstallPlans it would approve, one row each, for awk
  tollgate eval --snapshot state.yaml --only plans --no-headers | awk '$3 == "yes" {print $1 "/" $2}'

  # would a candidate policy have decided last week's upgrades the same way?
  tollgate eval --replay decisions.log --policy-dir candidate/`,
		Args: cobra.NoArgs,
		RunE: runs(f.run),
	}
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "YAML/JSON file or folder of cluster state (required unless --replay; repeatable)")
	f.policy.bind(cmd)
	f.decision.bind(cmd)
	f.output.AddFlags(cmd)
	cmd.Flags().BoolVar(&f.failOnDeny, "fail-on-deny", false, fmt.Sprintf("exit with status %d when any Subscription's upgrade is denied", exitDenied))
	cmd.Flags().BoolVar(&f.failOnInvalidCatalog, "fail-on-invalid-catalog", false, fmt.Sprintf("exit with status %d when any CatalogSource of the snapshot is invalid", exitDenied))
	cmd.Flags().StringVar(&f.replay, "replay", "", "instead of --snapshot: re-evaluate the decisions of the decision log `FILE` written by 'tollgate run --decision-log' ('-' reads standard input) with the embedded policies, --bundle and --policy-dir (no cluster: the policy ConfigMaps are not read), and say which come out differently (exit status 3 if any, or if a logged input does not match its digests)")
	return cmd
}

func (f *evalFlags) run(ctx context.Context, stdout, stderr io.Writer, _ []string) error {
	if f.replay != "" {
		f.output.WithTables() // a replay prints one table: --no-headers needs no --only
		return runReplay(ctx, stdout, *f)
	}
	if len(f.snapshot) == 0 {
		return errors.New(`required flag(s) "snapshot" not set (or --replay FILE)`)
	}
	if err := f.output.Validate(); err != nil {
		return err
	}
	off, err := openOffline(ctx, f.snapshot, f.policy, f.decision, stderr)
	if err != nil {
		return err
	}
	report, err := off.Report(ctx)
	if err != nil {
		return err
	}
	if err := f.output.Print(stdout, report.Printable(selfName())); err != nil {
		return err
	}
	if f.failOnDeny && report.Denied() {
		return &exitError{code: exitDenied, err: errors.New("an upgrade is denied (--fail-on-deny)")}
	}
	if f.failOnInvalidCatalog && report.InvalidCatalog() {
		return &exitError{code: exitDenied, err: errors.New("a CatalogSource is invalid (--fail-on-invalid-catalog)")}
	}
	return nil
}

// offline is an evaluation of a snapshot as the manager decides on the cluster it was taken
// from, and the policy set's sources, for explain.
type offline struct {
	*evaluation.Evaluator
	policy *explain.PolicyView
}

// openOffline loads the snapshot and the policies, and gives every Subscription the gate the
// manager would create for it.
func openOffline(ctx context.Context, paths []string, pf policyFlags, df decisionFlags, warn io.Writer) (*offline, error) {
	now, cfg, err := df.parse()
	if err != nil {
		return nil, err
	}
	snap, err := snapshot.LoadDecidable(ctx, paths, true)
	if err != nil {
		return nil, err
	}
	eng, view, err := pf.sources().Build(ctx, snap, warn)
	if err != nil {
		return nil, err
	}
	if err := evaluation.EnsureGates(ctx, snap); err != nil {
		return nil, err
	}
	return &offline{Evaluator: evaluation.New(snap, eng, cfg, now, warn), policy: view}, nil
}
