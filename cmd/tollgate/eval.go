package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/approval"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/explain"
	"github.com/tollgate-dev/tollgate/gatestatus"
	"github.com/tollgate-dev/tollgate/input"
	"github.com/tollgate-dev/tollgate/printers"
	"github.com/tollgate-dev/tollgate/snapshot"
)

func init() { extraCommands = append(extraCommands, newEvalCommand) }

// exitDenied is the exit code of `eval --fail-on-deny` when a Subscription is denied.
const exitDenied = 3

// evalReport is the output of `tollgate eval`; cmd/tollgate/README.md documents it.
type evalReport struct {
	Now            string              `json:"now"`
	PolicyRevision string              `json:"policyRevision"`
	Subscriptions  []subscriptionEval  `json:"subscriptions"`
	InstallPlans   []approval.Verdict  `json:"installPlans"`
	CatalogSources []catalogSourceEval `json:"catalogSources"`
}

type subscriptionEval struct {
	Namespace    string             `json:"namespace"`
	Name         string             `json:"name"`
	Package      string             `json:"package"`
	InstalledCSV string             `json:"installedCSV"`
	CurrentCSV   string             `json:"currentCSV"`
	Approval     string             `json:"approval"`
	Mode         string             `json:"mode"`
	State        string             `json:"state"`
	UpToDate     bool               `json:"upToDate"`
	Decision     decisionEval       `json:"decision"`
	Conditions   []engine.Condition `json:"conditions"`
	Health       []engine.Condition `json:"health"`
	// Status is the UpgradeGate status the manager would write.
	Status tollgatev1alpha1.UpgradeGateStatus `json:"status"`
}

type decisionEval struct {
	Allowed bool                      `json:"allowed"`
	Denials []tollgatev1alpha1.Denial `json:"denials"`
}

type catalogSourceEval struct {
	Namespace  string             `json:"namespace"`
	Name       string             `json:"name"`
	Valid      bool               `json:"valid"`
	Violations []engine.Violation `json:"violations"`
	Healthy    string             `json:"healthy"`
	// LastObservedState is status.connectionState.lastObservedState ("" without status).
	LastObservedState string `json:"lastObservedState"`
}

// printable is the report in every output format: -o name lists the Subscriptions.
func (r *evalReport) printable() printable {
	return printable{
		doc:   r,
		human: func(w io.Writer, o printers.TableOptions) error { return renderEvalTable(w, r, o) },
		names: func() []printers.Ref {
			refs := make([]printers.Ref, len(r.Subscriptions))
			for i, s := range r.Subscriptions {
				refs[i] = printers.Ref{GroupKind: subscriptionKind, Name: s.Name}
			}
			return refs
		},
	}
}

// denied says whether any Subscription's upgrade is denied.
func (r *evalReport) denied() bool {
	return slices.ContainsFunc(r.Subscriptions, func(s subscriptionEval) bool { return !s.Decision.Allowed })
}

// invalidCatalog says whether a CatalogSource of the snapshot is invalid.
func (r *evalReport) invalidCatalog() bool {
	return slices.ContainsFunc(r.CatalogSources, func(c catalogSourceEval) bool { return !c.Valid })
}

type evalFlags struct {
	snapshot   []string
	policy     policyFlags
	decision   decisionFlags
	output     *outputFlags
	failOnDeny bool
	// failOnInvalidCatalog exits with exitDenied when a CatalogSource is invalid.
	failOnInvalidCatalog bool
	replay               string // a decision log to re-evaluate (replay.go)
}

// evalTables are the tables of eval's -o table and wide, as --only names them.
var evalTables = []string{"subscriptions", "plans", "catalogs"}

func newEvalCommand() *cobra.Command {
	f := evalFlags{output: newOutputFlags("table", "wide", "json", "yaml", "name").withTables(evalTables...)}
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
approved only when it is Manual, not yet approved, waiting in RequiresApproval, and every CSV
it lists is wanted by a Manual Subscription whose gate is in Enforce mode and whose decision
allows it; a Subscription sees the other operators of its plans through their own decisions.

A snapshot of CatalogSources alone (no Subscription) checks the catalogs before they reach a
cluster: each one's validity and the fields at fault. A snapshot holding neither is an error.

Exit status: 0 when the evaluation ran (whatever it decided); 1 on an error (unreadable
snapshot, policies that do not compile); 3 with --fail-on-deny when any Subscription's upgrade
is denied, and with --fail-on-invalid-catalog when any CatalogSource is invalid.

With --replay FILE instead of --snapshot, it re-evaluates the decisions a manager logged with
--decision-log, each from its logged input (which holds its clock, input.now), and says which
come out differently: exit status 3 when any does, or when an event's input is not the one its
input_digest was taken of (edited after it was logged: INPUT EDITED, never "same"). There is
no cluster, so the policy ConfigMaps are not read: pass their modules with --policy-dir. --now,
--default-mode and --global-catalog-namespace do not apply: the logged input holds them.`,
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEval(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "YAML/JSON file or folder of cluster state (required unless --replay; repeatable)")
	f.policy.bind(cmd)
	f.decision.bind(cmd)
	f.output.bind(cmd)
	cmd.Flags().BoolVar(&f.failOnDeny, "fail-on-deny", false, fmt.Sprintf("exit with status %d when any Subscription's upgrade is denied", exitDenied))
	cmd.Flags().BoolVar(&f.failOnInvalidCatalog, "fail-on-invalid-catalog", false, fmt.Sprintf("exit with status %d when any CatalogSource of the snapshot is invalid", exitDenied))
	cmd.Flags().StringVar(&f.replay, "replay", "", "instead of --snapshot: re-evaluate the decisions of the decision log `FILE` written by 'tollgate run --decision-log' ('-' reads standard input) with the embedded policies, --bundle and --policy-dir (no cluster: the policy ConfigMaps are not read), and say which come out differently (exit status 3 if any, or if a logged input does not match its input_digest)")
	return cmd
}

func runEval(ctx context.Context, stdout, stderr io.Writer, f evalFlags) error {
	if f.replay != "" {
		f.output.withTables() // a replay prints one table: --no-headers needs no --only
		return runReplay(ctx, stdout, f)
	}
	if len(f.snapshot) == 0 {
		return errors.New(`required flag(s) "snapshot" not set (or --replay FILE)`)
	}
	if err := f.output.validate(); err != nil {
		return err
	}
	off, err := openOffline(ctx, f.snapshot, f.policy, f.decision, stderr)
	if err != nil {
		return err
	}
	report, err := off.report(ctx)
	if err != nil {
		return err
	}
	if err := f.output.print(stdout, report.printable()); err != nil {
		return err
	}
	if f.failOnDeny && report.denied() {
		return &exitError{code: exitDenied, err: errors.New("an upgrade is denied (--fail-on-deny)")}
	}
	if f.failOnInvalidCatalog && report.invalidCatalog() {
		return &exitError{code: exitDenied, err: errors.New("a CatalogSource is invalid (--fail-on-invalid-catalog)")}
	}
	return nil
}

// offline decides on a snapshot as the manager decides on the cluster it was taken from.
type offline struct {
	snap    *snapshot.Snapshot
	engine  *engine.Engine
	decider *approval.Decider
	now     time.Time
	warn    io.Writer
	policy  *explain.PolicyView // the policy set's sources, for explain
}

// openOffline loads the snapshot and the policies, and gives every Subscription the gate the
// manager would create for it.
func openOffline(ctx context.Context, paths []string, pf policyFlags, df decisionFlags, warn io.Writer) (*offline, error) {
	now, cfg, err := df.parse()
	if err != nil {
		return nil, err
	}
	snap, err := loadSnapshot(ctx, paths, true)
	if err != nil {
		return nil, err
	}
	eng, view, err := pf.build(ctx, snap, warn)
	if err != nil {
		return nil, err
	}
	if err := ensureGates(ctx, snap); err != nil {
		return nil, err
	}
	d := &approval.Decider{Reader: snap, Policies: eng, Input: cfg, Now: func() time.Time { return now }}
	return &offline{snap: snap, engine: eng, decider: d, now: now, warn: warn, policy: view}, nil
}

// loadSnapshot reads the snapshot whole or not at all: a document that cannot be read as what
// it claims is an error, never skipped, since a skipped OperatorCondition would let an upgrade
// through that the cluster holds. A snapshot without a Subscription decides nothing: it is an
// error, unless catalogsSuffice and it holds CatalogSources (eval lints them).
func loadSnapshot(ctx context.Context, paths []string, catalogsSuffice bool) (*snapshot.Snapshot, error) {
	snap, err := snapshot.Load(paths...)
	if le := (*snapshot.LoadError)(nil); errors.As(err, &le) {
		return nil, fmt.Errorf("the snapshot cannot be read whole, and Tollgate decides nothing on part of it; fix these documents:\n%w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (check the --snapshot path)", err)
	}
	var subs v1alpha1.SubscriptionList
	if err := snap.List(ctx, &subs); err != nil {
		return nil, fmt.Errorf("list subscriptions in the snapshot: %w", err)
	}
	if len(subs.Items) > 0 {
		return snap, nil
	}
	if !catalogsSuffice {
		return nil, fmt.Errorf("no Subscription (operators.coreos.com/v1alpha1) in %s: nothing to decide (is it the right snapshot?)", strings.Join(paths, ", "))
	}
	var catalogs v1alpha1.CatalogSourceList
	if err := snap.List(ctx, &catalogs); err != nil {
		return nil, fmt.Errorf("list catalog sources in the snapshot: %w", err)
	}
	if len(catalogs.Items) == 0 {
		return nil, fmt.Errorf("no Subscription nor CatalogSource (operators.coreos.com/v1alpha1) in %s: nothing to decide or check (is it the right snapshot?)", strings.Join(paths, ", "))
	}
	return snap, nil
}

// ensureGates adds the gate the manager creates for every Subscription that has none.
func ensureGates(ctx context.Context, snap *snapshot.Snapshot) error {
	var subs v1alpha1.SubscriptionList
	if err := snap.List(ctx, &subs); err != nil {
		return fmt.Errorf("list subscriptions in the snapshot: %w", err)
	}
	for i := range subs.Items {
		sub := &subs.Items[i]
		err := snap.Get(ctx, client.ObjectKeyFromObject(sub), &tollgatev1alpha1.UpgradeGate{})
		if err := client.IgnoreNotFound(err); err != nil {
			return err
		}
		if err == nil {
			continue
		}
		if err := snap.Add(gatestatus.New(sub)); err != nil {
			return fmt.Errorf("add the gate of %s/%s: %w", sub.Namespace, sub.Name, err)
		}
	}
	return nil
}

// report decides every Subscription, judges every InstallPlan and validates every
// CatalogSource in the snapshot.
func (o *offline) report(ctx context.Context) (*evalReport, error) {
	r := &evalReport{Now: o.now.UTC().Format(time.RFC3339), PolicyRevision: o.engine.Revision(), Subscriptions: []subscriptionEval{}}
	var subs v1alpha1.SubscriptionList
	if err := o.snap.List(ctx, &subs); err != nil {
		return nil, fmt.Errorf("list subscriptions in the snapshot: %w", err)
	}
	for i := range subs.Items {
		s, err := o.subscription(ctx, client.ObjectKeyFromObject(&subs.Items[i]))
		if err != nil {
			return nil, err
		}
		r.Subscriptions = append(r.Subscriptions, s)
	}
	var err error
	if r.InstallPlans, err = o.installPlans(ctx); err != nil {
		return nil, err
	}
	if r.CatalogSources, err = o.catalogSources(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// subscription decides one Subscription and builds the status the manager would write.
func (o *offline) subscription(ctx context.Context, key client.ObjectKey) (subscriptionEval, error) {
	dec, err := o.decider.Decide(ctx, key)
	if err != nil || dec == nil {
		return subscriptionEval{}, fmt.Errorf("decide %s: %w", key, err)
	}
	sub, res := dec.Subscription, dec.Result
	gate := dec.Gate
	if gate == nil {
		gate = gatestatus.New(sub)
	}
	approvalMode := approval.ApprovalOf(sub)
	status, problems := gatestatus.Next(gate.Status, gatestatus.Observation{
		Generation: gate.Generation, Subscription: sub, Result: res,
		Digest: func() string { return engine.Digest(dec.Doc) },
		Extra:  []metav1.Condition{gatestatus.AutomaticApproval(sub, approvalMode, false)},
		Now:    metav1.NewTime(o.now.Truncate(time.Second)),
	})
	for _, p := range problems {
		fmt.Fprintf(o.warn, "warning: %s: %s\n", key, p)
	}
	s := subscriptionEval{
		Namespace: sub.Namespace, Name: sub.Name,
		InstalledCSV: sub.Status.InstalledCSV, CurrentCSV: sub.Status.CurrentCSV,
		Approval: string(approvalMode), Mode: string(o.decider.Mode(gate)),
		State: res.State, UpToDate: res.UpToDate,
		Decision:   decisionEval{Allowed: res.Decision.Allowed, Denials: orEmpty(gatestatus.Denials(res.Decision))},
		Conditions: orEmpty(res.Conditions), Health: orEmpty(res.Health),
		Status: status,
	}
	if sub.Spec != nil {
		s.Package = sub.Spec.Package
	}
	return s, nil
}

// installPlans judges every plan in the snapshot.
func (o *offline) installPlans(ctx context.Context) ([]approval.Verdict, error) {
	var plans v1alpha1.InstallPlanList
	if err := o.snap.List(ctx, &plans); err != nil {
		return nil, fmt.Errorf("list install plans in the snapshot: %w", err)
	}
	out := []approval.Verdict{}
	for i := range plans.Items {
		v, err := o.decider.Judge(ctx, &plans.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// catalogSources reports every CatalogSource in the snapshot, visible to a Subscription or
// not: their validity comes from the policies (one evaluation of a document that sees them
// all), their health from status.connectionState as the policies define it.
func (o *offline) catalogSources(ctx context.Context) ([]catalogSourceEval, error) {
	var list v1alpha1.CatalogSourceList
	if err := o.snap.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list catalog sources in the snapshot: %w", err)
	}
	out := []catalogSourceEval{}
	if len(list.Items) == 0 {
		return out, nil
	}
	res := o.engine.Evaluate(ctx, input.CatalogDocument(list.Items, o.decider.Input, o.now))
	if res.Err != nil {
		return nil, fmt.Errorf("validate catalog sources: %w", res.Err)
	}
	for _, cs := range list.Items {
		e := catalogSourceEval{Namespace: cs.Namespace, Name: cs.Name, Healthy: string(metav1.ConditionUnknown), Violations: []engine.Violation{}}
		if st := cs.Status.GRPCConnectionState; st != nil && st.LastObservedState != "" {
			e.LastObservedState = st.LastObservedState
			e.Healthy = string(metav1.ConditionFalse)
			if st.LastObservedState == "READY" {
				e.Healthy = string(metav1.ConditionTrue)
			}
		}
		i := slices.IndexFunc(res.CatalogValidation, func(v engine.CatalogValidation) bool { return v.Namespace == cs.Namespace && v.Name == cs.Name })
		if i < 0 {
			return nil, fmt.Errorf("the policies returned no validation for CatalogSource %s/%s", cs.Namespace, cs.Name)
		}
		e.Valid, e.Violations = res.CatalogValidation[i].Valid, orEmpty(res.CatalogValidation[i].Violations)
		out = append(out, e)
	}
	return out, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
