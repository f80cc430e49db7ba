package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
)

type explainFlags struct {
	cluster  kubeconn.Flags
	policy   policyFlags
	snapshot []string
	decision decisionFlags
	output   *printers.PrintFlags
	trace    bool
	all      bool
}

func newExplainCommand() *cobra.Command {
	f := explainFlags{output: printers.NewPrintFlags("text", "json", "yaml", "name")}
	cmd := &cobra.Command{
		Use:   "explain [-n NAMESPACE | -A] SUBSCRIPTION | clusterextension/NAME",
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

With --snapshot it explains from a snapshot instead of a live cluster (as eval evaluates it).

With -A it explains the Subscription of that name in every namespace that has one, each in
turn, as 'kubectl describe -A' does (-o json prints one document per Subscription). Without
-A, a Subscription that is not in the namespace but is in another is named in the error.

clusterextension/NAME explains an OLM v1 ClusterExtension: the successors OLM v1 would take from
its installed bundle, the decision on each, the pin Tollgate would set, and the denials on the
highest successor with their facts and what would lift them (an override is the kubectl patch
of its ExtensionGate). On a live cluster it reads the catalogs' content through the API
server's proxy to catalogd (get services/proxy in catalogd's namespace).`,
		Example: `  # why is the etcd upgrade in namespace operators not happening?
  tollgate explain -n operators etcd

  # the same, with the policies' trace notes
  tollgate explain -n operators etcd --trace

  # every Subscription named etcd, whatever its namespace
  tollgate explain -A etcd

  # only the denial codes
  tollgate explain -n operators etcd -o jsonpath='{.denials[*].code}'

  # from a snapshot, as JSON
  tollgate explain --snapshot state.yaml -n operators etcd -o json

  # why is an OLM v1 extension's pin not moving?
  tollgate explain --snapshot state.yaml clusterextension/argocd`,
		Args:              wantArgs(false, "the name of one Subscription", "explain -n operators etcd (kubectl get subscriptions -A lists them)"),
		RunE:              runs(f.run),
		ValidArgsFunction: f.cluster.CompleteSubscriptions(&f.all),
	}
	f.cluster.AddFlags(cmd)
	f.policy.bind(cmd)
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "explain from this YAML/JSON file or folder of cluster state instead of the live cluster")
	f.decision.bind(cmd)
	f.cluster.AddAllNamespaces(cmd, &f.all, "explain the Subscription of this name in every namespace that has one")
	f.output.AddFlags(cmd)
	cmd.Flags().BoolVar(&f.trace, "trace", false, "add the policies' trace notes, print() output and built-in errors")
	return cmd
}

func (f *explainFlags) run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	name := args[0]
	if err := f.output.Validate(); err != nil {
		return err
	}
	if kind, extension, ok := strings.Cut(name, "/"); ok {
		return f.runExtension(ctx, stdout, stderr, kind, extension)
	}
	if err := f.cluster.CheckScope(); err != nil {
		return err
	}
	x, ns, err := f.explainer(ctx, stderr)
	if err != nil {
		return err
	}
	keys := []types.NamespacedName{{Namespace: ns, Name: name}}
	if f.all {
		if keys, err = explain.SubscriptionsNamed(ctx, x.Decider.Reader, name); err != nil {
			return err
		}
	}
	for i, key := range keys {
		report, err := x.Explain(ctx, key)
		if errors.Is(err, explain.ErrNoSubscription) {
			return explain.Elsewhere(ctx, x.Decider.Reader, key, err)
		}
		if err != nil {
			return err
		}
		if !f.trace {
			report.Notes = nil
		}
		if err := f.print(stdout, report, i); err != nil {
			return err
		}
	}
	return nil
}

// print writes the i-th report, after a separator when it is not the first.
func (f *explainFlags) print(w io.Writer, report *explain.Report, i int) error {
	if sep := map[string]string{"text": "\n", "yaml": "---\n"}[f.output.Format()]; i > 0 && sep != "" {
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
	}
	return f.output.Print(w, report.Printable())
}

// explainer reads from the snapshot when one is given, else from the live cluster, and
// returns the namespace to look in.
func (f *explainFlags) explainer(ctx context.Context, stderr io.Writer) (*explain.Explainer, string, error) {
	if len(f.snapshot) > 0 {
		off, err := openOffline(ctx, f.snapshot, f.policy, f.decision, stderr)
		if err != nil {
			return nil, "", err
		}
		x := &explain.Explainer{Decider: off.Decider, Engine: off.Engine, Self: selfName(), WithStored: true, Policy: off.policy}
		return x, cmp.Or(f.cluster.Namespace(), "default"), nil
	}
	now, cfg, err := f.decision.parse()
	if err != nil {
		return nil, "", err
	}
	c, ns, _, err := f.cluster.Connect()
	if err != nil {
		return nil, "", err
	}
	eng, view, err := f.policy.sources().Build(ctx, c, stderr)
	if err != nil {
		return nil, "", err
	}
	d := &approval.Decider{Reader: c, Policies: eng, Input: cfg, Now: func() time.Time { return now }}
	return &explain.Explainer{Decider: d, Engine: eng, Self: selfName(), WithStored: true, Policy: view}, ns, nil
}

// extensionKinds are the names explain takes for a ClusterExtension, as kubectl's TYPE/NAME.
var extensionKinds = []string{"clusterextension", "clusterextensions", "clusterextension.olm.operatorframework.io", "clusterextensions.olm.operatorframework.io"}

// runExtension explains an OLM v1 ClusterExtension's pin from a snapshot, which carries the
// catalog content it is decided on.
func (f *explainFlags) runExtension(ctx context.Context, stdout, stderr io.Writer, kind, name string) error {
	switch {
	case !slices.Contains(extensionKinds, strings.ToLower(kind)):
		return fmt.Errorf("%q: explain takes a Subscription's name, or clusterextension/NAME", kind+"/"+name)
	case f.all || f.cluster.Namespace() != "":
		return errors.New("a ClusterExtension is cluster-scoped: give no -n or -A")
	}
	ev, err := f.extensionEvaluator(ctx, stderr)
	if err != nil {
		return err
	}
	x := &explain.Explainer{Decider: ev.Decider, Engine: ev.Engine, Self: selfName()}
	report, err := x.ExplainExtension(ctx, ev, name)
	if err != nil {
		return err
	}
	if !f.trace {
		report.Notes = nil
	}
	return f.output.Print(stdout, report.Printable())
}

// extensionEvaluator decides on the snapshot when one is given, else on the live cluster, whose
// catalogs' content it reads through the API server's proxy to catalogd.
func (f *explainFlags) extensionEvaluator(ctx context.Context, stderr io.Writer) (*evaluation.Evaluator, error) {
	if len(f.snapshot) > 0 {
		off, err := openOffline(ctx, f.snapshot, f.policy, f.decision, stderr)
		if err != nil {
			return nil, err
		}
		return off.Evaluator, nil
	}
	now, cfg, err := f.decision.parse()
	if err != nil {
		return nil, err
	}
	c, _, rc, err := f.cluster.Connect()
	if err != nil {
		return nil, err
	}
	eng, _, err := f.policy.sources().Build(ctx, c, stderr)
	if err != nil {
		return nil, err
	}
	ev := evaluation.New(c, eng, cfg, now, stderr)
	if ev.Content, err = kubeconn.NewCatalogs(rc); err != nil {
		return nil, err
	}
	return ev, nil
}
