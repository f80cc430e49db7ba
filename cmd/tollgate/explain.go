package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/approval"
	"github.com/tollgate-dev/tollgate/explain"
)

func init() { extraCommands = append(extraCommands, newExplainCommand) }

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

It compares its policy set with the one the manager runs (the policy revision the gate was
decided with, and the version of each policy ConfigMap the manager says it serves); when they
differ it names each difference and leads with the decision the manager recorded in the gate,
labelled as the manager's, never its own evaluation in its place.

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
	x, ns, err := f.explainer(ctx, stderr)
	if err != nil {
		return err
	}
	report, err := x.Explain(ctx, types.NamespacedName{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	if !f.trace {
		report.Notes = nil
	}
	if f.output == "json" {
		return report.WriteJSON(stdout)
	}
	return report.WriteText(stdout)
}

// explainer reads from the snapshot when one is given, else from the live cluster, and
// returns the namespace to look in.
func (f *explainFlags) explainer(ctx context.Context, stderr io.Writer) (*explain.Explainer, string, error) {
	if len(f.snapshot) > 0 {
		off, err := openOffline(ctx, f.snapshot, f.policy, f.decision, stderr)
		if err != nil {
			return nil, "", err
		}
		x := &explain.Explainer{Decider: off.decider, Engine: off.engine, Self: selfName(), WithStored: true, Policy: off.policy}
		return x, orDefault(f.cluster.namespace, "default"), nil
	}
	now, cfg, err := f.decision.parse()
	if err != nil {
		return nil, "", err
	}
	c, ns, _, err := f.cluster.connect()
	if err != nil {
		return nil, "", err
	}
	eng, view, err := f.policy.build(ctx, c, stderr)
	if err != nil {
		return nil, "", err
	}
	d := &approval.Decider{Reader: c, Policies: eng, Input: cfg, Now: func() time.Time { return now }}
	return &explain.Explainer{Decider: d, Engine: eng, Self: selfName(), WithStored: true, Policy: view}, ns, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
