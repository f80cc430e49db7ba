package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
)

func init() { extraCommands = append(extraCommands, newExplainCommand) }

// explainReport is what `tollgate explain` knows about one Subscription's upgrade.
type explainReport struct {
	Namespace      string             `json:"namespace"`
	Name           string             `json:"name"`
	Package        string             `json:"package"`
	Channel        string             `json:"channel,omitempty"`
	SourceCatalog  string             `json:"sourceCatalog,omitempty"`
	InstalledCSV   string             `json:"installedCSV"`
	InstalledPhase string             `json:"installedPhase,omitempty"`
	CurrentCSV     string             `json:"currentCSV"`
	State          string             `json:"state"`
	UpToDate       bool               `json:"upToDate"`
	Approval       string             `json:"approval"`
	Mode           string             `json:"mode"`
	Now            string             `json:"now"`
	PolicyRevision string             `json:"policyRevision"`
	Allowed        bool               `json:"allowed"`
	Denials        []explainedDenial  `json:"denials"`
	InstallPlans   []installPlanEval  `json:"installPlans"`
	Health         []engine.Condition `json:"health"`
	Conditions     []engine.Condition `json:"conditions"`
	// Stored is the decision the manager last wrote into the UpgradeGate, when it has one.
	Stored *storedDecision `json:"stored,omitempty"`
	// Notices are things a person must know beyond the denials (Automatic approval, Audit mode).
	Notices []remedy `json:"notices"`
	// Notes are the policies' print() and trace() notes and built-in errors (--trace).
	Notes []engine.Note `json:"notes,omitempty"`
}

// explainedDenial is one denial with where it comes from, what it rests on, and what would
// lift it.
type explainedDenial struct {
	Code           string   `json:"code"`
	Message        string   `json:"message"`
	Overridden     bool     `json:"overridden"`
	OverrideReason string   `json:"overrideReason,omitempty"`
	Rule           string   `json:"rule,omitempty"`
	Title          string   `json:"title,omitempty"`
	File           string   `json:"file,omitempty"`
	Row            int      `json:"row,omitempty"`
	Facts          []string `json:"facts"`
	Lift           []remedy `json:"lift"`
}

// remedy is one way to lift a denial: what must happen, and the command that does it when
// there is one.
type remedy struct {
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
}

type storedDecision struct {
	Allowed        bool   `json:"allowed"`
	BlockedBy      string `json:"blockedBy,omitempty"`
	PolicyRevision string `json:"policyRevision,omitempty"`
	EvaluatedAt    string `json:"evaluatedAt,omitempty"`
	LastApproved   string `json:"lastApprovedInstallPlan,omitempty"`
}

type explainFlags struct {
	cluster  clusterFlags
	policy   policyFlags
	snapshot []string
	decision decisionFlags
	output   string
	trace    bool
}

func newExplainCommand() *cobra.Command {
	var f explainFlags
	cmd := &cobra.Command{
		Use:   "explain [-n NAMESPACE] SUBSCRIPTION",
		Short: "Explain why a Subscription's upgrade is held or allowed, and what would lift a hold",
		Long: `Read a Subscription and everything its decision rests on from the cluster, evaluate the
cluster's current policies (embedded, plus the policy ConfigMaps of --policy-namespace), and
print for a person: the decision; each denial with its code, message, the policy rule and file
that produced it, the facts it rests on and what would lift it (what the operator must report,
or the kubectl patch of an admin override); the InstallPlans waiting; the operands' health;
and the Subscription's conditions.

With --snapshot it explains from a snapshot instead of a live cluster (as eval evaluates it).`,
		Example: `  # why is the etcd upgrade in namespace operators not happening?
  tollgate explain -n operators etcd

  # as a kubectl plugin (installed as kubectl-tollgate on the PATH)
  kubectl tollgate explain -n operators etcd --trace

  # from a snapshot, as JSON
  tollgate explain --snapshot state.yaml -n operators etcd -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("give the name of one Subscription, e.g. tollgate explain -n operators etcd (kubectl get subscriptions -A lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, args[0])
		},
	}
	f.cluster.bind(cmd)
	f.policy.bind(cmd)
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "explain from this YAML/JSON file or folder of cluster state instead of the live cluster")
	f.decision.bind(cmd)
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&f.trace, "trace", false, "add the policies' trace notes, print() output and built-in errors")
	return cmd
}

func runExplain(ctx context.Context, stdout, stderr io.Writer, f explainFlags, name string) error {
	if err := checkOutput(f.output, "text", "json"); err != nil {
		return err
	}
	now, cfg, mode, err := f.decision.parse()
	if err != nil {
		return err
	}

	var (
		reader client.Reader
		ns     = f.cluster.namespace
		stored = true
	)
	if len(f.snapshot) > 0 {
		snap, problems, err := gather.LoadSnapshot(f.snapshot...)
		if err != nil {
			return fmt.Errorf("%w (check the --snapshot path)", err)
		}
		reportLoadErrors(stderr, problems)
		if ns == "" {
			ns = "default"
		}
		eng, err := f.policy.engine(ctx, snap, stderr)
		if err != nil {
			return err
		}
		// Settle the snapshot first, so the peers of a bundled plan have decisions.
		o := &offline{snap: snap, engine: eng, config: cfg, defaultMode: mode, now: now}
		if _, err := o.settle(ctx); err != nil {
			return err
		}
		report, err := explainSubscription(ctx, snap, eng, types.NamespacedName{Namespace: ns, Name: name}, cfg, mode, now, false)
		if err != nil {
			return err
		}
		return writeExplain(stdout, f.output, report, f.trace)
	}

	c, ns, _, err := f.cluster.connect()
	if err != nil {
		return err
	}
	reader = c
	eng, err := f.policy.engine(ctx, reader, stderr)
	if err != nil {
		return err
	}
	report, err := explainSubscription(ctx, reader, eng, types.NamespacedName{Namespace: ns, Name: name}, cfg, mode, now, stored)
	if err != nil {
		return err
	}
	return writeExplain(stdout, f.output, report, f.trace)
}

func writeExplain(w io.Writer, format string, r *explainReport, trace bool) error {
	if !trace {
		r.Notes = nil
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return renderExplanation(w, r)
}

var errNoSubscription = errors.New("subscription not found")

// explainSubscription gathers the Subscription's input through r, evaluates it with tracing
// and works out the facts and remedies of each denial. withStored reports the decision the
// manager last stored in the gate (live clusters; a settled snapshot's gates hold ours).
func explainSubscription(ctx context.Context, r client.Reader, eng *engine.Engine, key types.NamespacedName, cfg gather.Config, mode tollgatev1alpha1.Mode, now time.Time, withStored bool) (*explainReport, error) {
	in, err := (&gather.Builder{Reader: r, Config: cfg, Now: func() time.Time { return now }}).Build(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read the state of Subscription %s: %w", key, err)
	}
	if in == nil {
		return nil, fmt.Errorf("%w: no Subscription %s in namespace %s (list them with: kubectl get subscriptions -A)", errNoSubscription, key.Name, key.Namespace)
	}
	ex, _ := eng.Explain(ctx, in.Doc) // a policy error is a PolicyError denial in the result
	res := ex.Result
	sub := in.Subscription
	rep := &explainReport{
		Namespace:      sub.Namespace,
		Name:           sub.Name,
		InstalledCSV:   sub.Status.InstalledCSV,
		CurrentCSV:     sub.Status.CurrentCSV,
		State:          res.State,
		UpToDate:       res.UpToDate,
		Approval:       string(controllers.ApprovalOf(sub)),
		Mode:           string(controllers.EffectiveMode(in.Gate, mode)),
		Now:            now.UTC().Format(time.RFC3339),
		PolicyRevision: res.Revision,
		Allowed:        res.Decision.Allowed,
		Denials:        []explainedDenial{},
		InstallPlans:   []installPlanEval{},
		Health:         orEmpty(res.Health),
		Conditions:     orEmpty(res.Conditions),
		Notices:        []remedy{},
		Notes:          ex.Notes,
	}
	if sub.Spec != nil {
		rep.Package, rep.Channel = sub.Spec.Package, sub.Spec.Channel
		if sub.Spec.CatalogSource != "" {
			rep.SourceCatalog = orDefault(sub.Spec.CatalogSourceNamespace, sub.Namespace) + "/" + sub.Spec.CatalogSource
		}
	}
	if in.InstalledCSV != nil {
		rep.InstalledPhase = string(in.InstalledCSV.Status.Phase)
	}
	facts := &factFinder{doc: in.Doc, validation: res.CatalogValidation, gate: in.Gate, ns: sub.Namespace, name: sub.Name, now: now}
	for _, d := range ex.Denials {
		rep.Denials = append(rep.Denials, facts.explain(d))
	}

	verdict := controllers.Verdict{
		Subscription: key.String(), Allowed: res.Decision.Allowed, BlockedBy: res.Decision.BlockedBy(),
		Mode: controllers.EffectiveMode(in.Gate, mode), Approval: controllers.ApprovalOf(sub),
	}
	for i := range in.PendingInstallPlans {
		plan := &in.PendingInstallPlans[i]
		verdicts, err := controllers.Verdicts(ctx, r, plan, mode, map[string]controllers.Verdict{sub.Status.CurrentCSV: verdict}, nil)
		if err != nil {
			return nil, err
		}
		rep.InstallPlans = append(rep.InstallPlans, planEval(plan, verdicts))
	}

	if rep.Approval != "Manual" {
		rep.Notices = append(rep.Notices, remedy{
			Text: fmt.Sprintf("installPlanApproval is %s: OLM approves this operator's InstallPlans itself, so Tollgate cannot hold them and only reports its decision. "+
				"To let Tollgate gate upgrades, switch it to Manual (or run the manager with --take-over-approval):", rep.Approval),
			Command: fmt.Sprintf(`kubectl patch subscription -n %s %s --type merge -p '{"spec":{"installPlanApproval":"Manual"}}'`, sub.Namespace, sub.Name)})
	}
	if rep.Mode == string(tollgatev1alpha1.ModeAudit) {
		rep.Notices = append(rep.Notices, remedy{Text: "The gate is in Audit mode: Tollgate decides and reports but never approves. To let it approve:",
			Command: fmt.Sprintf(`kubectl patch upgradegate -n %s %s --type merge -p '{"spec":{"mode":"Enforce"}}'`, sub.Namespace, sub.Name)})
	}
	if res.Decision.Truncated > 0 {
		rep.Notices = append(rep.Notices, remedy{Text: fmt.Sprintf("%d more denial(s) were left out (at most %d are kept).", res.Decision.Truncated, engine.MaxDenials)})
	}
	if withStored {
		if in.Gate == nil {
			rep.Notices = append(rep.Notices, remedy{Text: fmt.Sprintf("There is no UpgradeGate %s/%s yet: is the Tollgate manager running?", sub.Namespace, sub.Name), Command: "kubectl get upgradegates -A"})
		} else if d := in.Gate.Status.Decision; d.EvaluatedAt != nil {
			rep.Stored = &storedDecision{Allowed: d.Allowed, BlockedBy: d.BlockedBy, PolicyRevision: d.PolicyRevision,
				EvaluatedAt: d.EvaluatedAt.UTC().Format(time.RFC3339), LastApproved: d.LastApprovedInstallPlan}
			if d.PolicyRevision != "" && d.PolicyRevision != res.Revision {
				rep.Notices = append(rep.Notices, remedy{Text: fmt.Sprintf("The manager decided with policy revision %s, this explanation uses %s: the policies differ (a ConfigMap changed, or bundles or flags such as --policy-dir differ).", d.PolicyRevision, res.Revision)})
			}
		}
	}
	return rep, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
