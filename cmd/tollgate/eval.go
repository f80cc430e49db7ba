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

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
)

func init() { extraCommands = append(extraCommands, newEvalCommand) }

// exitDenied is the exit code of `eval --fail-on-deny` when a Subscription is denied.
const exitDenied = 3

// evalReport is the output of `tollgate eval`; cmd/tollgate/README.md documents it.
type evalReport struct {
	Now            string              `json:"now"`
	PolicyRevision string              `json:"policyRevision"`
	Subscriptions  []subscriptionEval  `json:"subscriptions"`
	InstallPlans   []installPlanEval   `json:"installPlans"`
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
}

type decisionEval struct {
	Allowed bool         `json:"allowed"`
	Denials []denialEval `json:"denials"`
}

type denialEval struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Overridden bool   `json:"overridden"`
	Source     string `json:"source"`
}

type installPlanEval struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Approve   bool     `json:"approve"`
	CSVs      []string `json:"csvs"`
	// BlockedBy names each CSV that keeps the plan from approval, and why.
	BlockedBy []string `json:"blockedBy"`
	// Reason says why the plan is not Tollgate's to approve (not Manual, already approved,
	// not waiting in RequiresApproval); empty when it is.
	Reason string `json:"reason,omitempty"`
}

// answer is the plan's verdict for a person: "yes", or "no" and why not.
func (p installPlanEval) answer() (approve, whyNot string) {
	switch {
	case p.Approve:
		return "yes", ""
	case len(p.BlockedBy) > 0:
		return "no", "blocked: " + strings.Join(p.BlockedBy, "; ")
	default:
		return "no", p.Reason
	}
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

// denied says whether any Subscription's upgrade is denied.
func (r *evalReport) denied() bool {
	return slices.ContainsFunc(r.Subscriptions, func(s subscriptionEval) bool { return !s.Decision.Allowed })
}

type evalFlags struct {
	snapshot   []string
	policy     policyFlags
	decision   decisionFlags
	output     string
	failOnDeny bool
}

func newEvalCommand() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval --snapshot PATH",
		Short: "Evaluate the policies on a snapshot of cluster state, without a cluster",
		Long: `Evaluate every Subscription in a snapshot with the same input builder and policies as the
manager, and say which InstallPlans Tollgate would approve.

PATH is a YAML or JSON file (multi-document, or a List) or a folder of them, holding the objects
'kubectl get -o yaml' or 'tollgate snapshot' prints. Unknown kinds are ignored; a malformed
document is reported on stderr with its file and line, and the rest is still evaluated.

Decisions are computed as the manager computes them: each Subscription is evaluated, its
decision is written into its UpgradeGate, and everything is evaluated again, so operators that
OLM bundles into one InstallPlan see each other's decisions. A plan is approved only when it is
Manual, not yet approved, waiting in RequiresApproval, and every CSV it lists is allowed by a
gate in Enforce mode of a Manual Subscription.

Exit status: 0 when the evaluation ran (whatever it decided); 1 on an error (unreadable
snapshot, policies that do not compile); 3 with --fail-on-deny when any Subscription's upgrade
is denied.`,
		Example: `  # what would Tollgate decide on the state a colleague attached to a bug report?
  tollgate eval --snapshot state.yaml

  # test your own rules in CI: extra or replacing .rego files, a fixed clock, fail on a denial
  tollgate eval --snapshot test/states/ --policy-dir policy/ --now 2026-11-20T12:00:00Z --fail-on-deny

  # with a policy pack, as JSON for jq
  tollgate eval --snapshot state.yaml --bundle bundles/packs/window -o json | jq '.installPlans[] | select(.approve)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEval(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "YAML/JSON file or folder of cluster state (required; repeatable)")
	f.policy.bind(cmd)
	f.decision.bind(cmd)
	cmd.Flags().StringVarP(&f.output, "output", "o", "table", "output format: table, json or yaml")
	cmd.Flags().BoolVar(&f.failOnDeny, "fail-on-deny", false, fmt.Sprintf("exit with status %d when any Subscription's upgrade is denied", exitDenied))
	_ = cmd.MarkFlagRequired("snapshot")
	return cmd
}

func runEval(ctx context.Context, stdout, stderr io.Writer, f evalFlags) error {
	if err := checkOutput(f.output, "table", "json", "yaml"); err != nil {
		return err
	}
	now, cfg, mode, err := f.decision.parse()
	if err != nil {
		return err
	}
	snap, problems, err := gather.LoadSnapshot(f.snapshot...)
	if err != nil {
		return fmt.Errorf("%w (check the --snapshot path)", err)
	}
	reportLoadErrors(stderr, problems)
	eng, err := f.policy.engine(ctx, snap, stderr)
	if err != nil {
		return err
	}
	o := &offline{snap: snap, engine: eng, now: now, defaultMode: mode, config: cfg}
	report, err := o.report(ctx)
	if err != nil {
		return err
	}
	if len(report.Subscriptions) == 0 {
		fmt.Fprintf(stderr, "warning: no Subscription in %s: nothing to decide (is it the right snapshot?)\n", strings.Join(f.snapshot, ", "))
	}
	if err := writeReport(stdout, f.output, report, renderEvalTable); err != nil {
		return err
	}
	if f.failOnDeny && report.denied() {
		return &exitError{code: exitDenied, err: errors.New("an upgrade is denied (--fail-on-deny)")}
	}
	return nil
}

// reportLoadErrors prints each malformed document, so the user can fix it; the rest loaded.
func reportLoadErrors(w io.Writer, problems []gather.LoadError) {
	for _, p := range problems {
		fmt.Fprintf(w, "warning: skipped %s\n", p.Error())
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "warning: %d document(s) skipped; the rest of the snapshot is evaluated\n", len(problems))
	}
}

// report settles the snapshot and summarises every Subscription, InstallPlan and CatalogSource.
func (o *offline) report(ctx context.Context) (*evalReport, error) {
	settled, err := o.settle(ctx)
	if err != nil {
		return nil, err
	}
	r := &evalReport{
		Now:            o.now.UTC().Format(time.RFC3339),
		PolicyRevision: o.engine.Revision(),
		Subscriptions:  []subscriptionEval{},
		InstallPlans:   []installPlanEval{},
		CatalogSources: []catalogSourceEval{},
	}
	for _, ev := range settled {
		r.Subscriptions = append(r.Subscriptions, o.subscriptionEval(ev))
	}
	if r.InstallPlans, err = o.installPlans(ctx); err != nil {
		return nil, err
	}
	if r.CatalogSources, err = o.catalogSources(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (o *offline) subscriptionEval(ev evaluated) subscriptionEval {
	sub, res := ev.input.Subscription, ev.result
	s := subscriptionEval{
		Namespace:    sub.Namespace,
		Name:         sub.Name,
		InstalledCSV: sub.Status.InstalledCSV,
		CurrentCSV:   sub.Status.CurrentCSV,
		Approval:     string(controllers.ApprovalOf(sub)),
		Mode:         string(controllers.EffectiveMode(ev.input.Gate, o.defaultMode)),
		State:        res.State,
		UpToDate:     res.UpToDate,
		Decision:     decisionEval{Allowed: res.Decision.Allowed, Denials: []denialEval{}},
		Conditions:   orEmpty(res.Conditions),
		Health:       orEmpty(res.Health),
	}
	if sub.Spec != nil {
		s.Package = sub.Spec.Package
	}
	for _, d := range res.Decision.Denials {
		s.Decision.Denials = append(s.Decision.Denials, denialEval{Code: d.Code, Message: d.Message, Overridden: d.Overridden, Source: d.Source})
	}
	return s
}

// installPlans applies the manager's approval rule to every plan, with the verdicts of the
// settled gates.
func (o *offline) installPlans(ctx context.Context) ([]installPlanEval, error) {
	var plans v1alpha1.InstallPlanList
	if err := o.snap.List(ctx, &plans); err != nil {
		return nil, fmt.Errorf("list install plans in the snapshot: %w", err)
	}
	out := []installPlanEval{}
	for i := range plans.Items {
		plan := &plans.Items[i]
		verdicts, err := controllers.Verdicts(ctx, o.snap, plan, o.defaultMode, nil, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, planEval(plan, verdicts))
	}
	return out, nil
}

// planEval is Approvable's answer, split per CSV so a person sees which operator holds a
// bundled plan.
func planEval(plan *v1alpha1.InstallPlan, verdicts map[string]controllers.Verdict) installPlanEval {
	e := installPlanEval{Namespace: plan.Namespace, Name: plan.Name, CSVs: orEmpty(plan.Spec.ClusterServiceVersionNames), BlockedBy: []string{}}
	ok, why := controllers.Approvable(plan, verdicts)
	e.Approve = ok
	if ok {
		return e
	}
	if !strings.HasPrefix(why, "blocked: ") {
		e.Reason = why
		return e
	}
	for _, csv := range plan.Spec.ClusterServiceVersionNames {
		one := plan.DeepCopy()
		one.Spec.ClusterServiceVersionNames = []string{csv}
		if ok, why := controllers.Approvable(one, verdicts); !ok {
			e.BlockedBy = append(e.BlockedBy, strings.TrimPrefix(why, "blocked: "))
		}
	}
	return e
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
	validity, err := o.validateCatalogs(ctx, list.Items)
	if err != nil {
		return nil, err
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
		v, ok := validity[cs.Namespace+"/"+cs.Name]
		if !ok {
			return nil, fmt.Errorf("the policies returned no validation for CatalogSource %s/%s", cs.Namespace, cs.Name)
		}
		e.Valid = v.Valid
		e.Violations = orEmpty(v.Violations)
		out = append(out, e)
	}
	return out, nil
}

// validateCatalogs evaluates one document whose visible catalogs are all of them: the
// policies validate every catalog a Subscription can see, so this uses their rules as is.
func (o *offline) validateCatalogs(ctx context.Context, catalogs []v1alpha1.CatalogSource) (map[string]engine.CatalogValidation, error) {
	objs := make([]any, 0, len(catalogs))
	for i := range catalogs {
		m, err := toMap(&catalogs[i])
		if err != nil {
			return nil, err
		}
		m["apiVersion"], m["kind"] = "operators.coreos.com/v1alpha1", "CatalogSource"
		objs = append(objs, m)
	}
	doc := map[string]any{
		"apiVersion": gather.InputAPIVersion,
		"subscription": map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"namespace": "tollgate-eval", "name": "catalog-validation"},
			"spec":     map[string]any{}, "status": map[string]any{},
		},
		"installedCSV": nil, "currentCSV": nil, "installPlan": nil,
		"pendingInstallPlans": []any{}, "installPlanPeers": []any{},
		"catalogSources": objs, "sourceCatalog": nil, "operatorCondition": nil,
		"operatorGroup": nil, "packageManifest": nil, "operands": []any{}, "gate": nil,
		"now":    o.now.UTC().Format(time.RFC3339),
		"config": map[string]any{"globalCatalogNamespace": o.config.GlobalCatalogNamespace, "defaultMode": string(o.defaultMode)},
	}
	res := o.engine.Evaluate(ctx, doc)
	if res.Err != nil {
		return nil, fmt.Errorf("validate catalog sources: %w", res.Err)
	}
	out := map[string]engine.CatalogValidation{}
	for _, v := range res.CatalogValidation {
		out[v.Namespace+"/"+v.Name] = v
	}
	return out, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
