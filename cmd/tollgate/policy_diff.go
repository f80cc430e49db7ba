package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/impact"
	"github.com/tollgate-dev/tollgate/internal/report/policyset"
)

// exitNewlyBlocked is the exit code of `policy diff --fail-on-block` when the candidate would
// newly block an upgrade (the same as eval --fail-on-deny).
const exitNewlyBlocked = exitDenied

type policyDiffFlags struct {
	cluster        kubeconn.Flags
	snapshot       []string
	currentBundles []string
	policyNS       string
	dir            string
	bundles        []string
	configMaps     []string
	decision       decisionFlags
	output         *printers.PrintFlags
	failOnBlock    bool
}

func newPolicyDiffCommand() *cobra.Command {
	f := policyDiffFlags{output: printers.NewPrintFlags("table", "wide", "json", "yaml", "name").WithTables(impact.Tables...)}
	cmd := &cobra.Command{
		Use:   "diff (--policy-dir DIR | --bundle X | --configmap FILE)...",
		Short: "Show which upgrades a policy change would newly block or allow",
		Long: `Decide every Subscription and its pending InstallPlans twice, from the same cluster state:
under the policies in force (the embedded policies, the bundles the manager runs with
(--current-bundle) and the policy ConfigMaps of --policy-namespace, as eval and explain compute
them) and under a candidate: the same plus --policy-dir (.rego files; a file with the path of an
embedded one replaces it), --bundle (more OPA bundles) and --configmap (policy ConfigMap YAML
files that replace the ConfigMaps of the same name, or add new ones). Print the Subscriptions
whose decision changes: newly blocked, newly allowed, or held by other codes; the InstallPlans
whose verdict changes; the OLM v1 ClusterExtensions whose highest successor's decision changes
(kind ClusterExtension; catalog content from the snapshot, or through the API server's proxy to
catalogd on a live cluster); and a summary.

It reads the live cluster (all namespaces; -n narrows), or a snapshot with --snapshot. A
candidate that does not compile is an error naming the file and line, never a diff.

Exit status: 0 when the diff ran; 1 on an error (the candidate does not compile, an unreadable
snapshot); 3 with --fail-on-block when the candidate would newly block any upgrade.`,
		Example: `  # what would my new rules do to the cluster's upgrades?
  tollgate policy diff --policy-dir policy/

  # the same on a snapshot, in CI: fail when anything would be newly blocked
  tollgate policy diff --snapshot state.yaml --configmap freeze.yaml --fail-on-block

  # adding a policy pack, in one namespace, as JSON
  tollgate policy diff -n operators --bundle bundles/packs/window -o json

  # only the count of newly blocked upgrades
  tollgate policy diff --policy-dir policy/ -o jsonpath='{.summary.newlyBlocked}'`,
		Args: cobra.NoArgs,
		RunE: runs(f.run),
	}
	f.cluster.AddFlags(cmd)
	cmd.Flags().Lookup("namespace").Usage = "only the Subscriptions of this namespace (default: all namespaces)"
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "diff on this YAML/JSON file or folder of cluster state instead of the live cluster (repeatable)")
	cmd.Flags().StringSliceVar(&f.currentBundles, "current-bundle", nil, "an OPA bundle the manager runs with (its --bundle), part of both policy sets (repeatable)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) in force")
	cmd.Flags().StringVar(&f.dir, "policy-dir", "", "candidate: folder of .rego modules added (a file with the path of an embedded one replaces it); *_test.rego skipped")
	cmd.Flags().StringSliceVar(&f.bundles, "bundle", nil, "candidate: an OPA bundle added (directory, .tar.gz or URL; repeatable)")
	cmd.Flags().StringArrayVar(&f.configMaps, "configmap", nil, "candidate: a YAML/JSON file of policy ConfigMaps that replace those of the same name or are added (repeatable)")
	f.decision.bind(cmd)
	f.output.AddFlags(cmd)
	cmd.Flags().BoolVar(&f.failOnBlock, "fail-on-block", false, fmt.Sprintf("exit with status %d when the candidate would newly block an upgrade", exitNewlyBlocked))
	return cmd
}

func (f *policyDiffFlags) run(ctx context.Context, stdout, stderr io.Writer, _ []string) error {
	if err := f.output.Validate(); err != nil {
		return err
	}
	if f.dir == "" && len(f.bundles) == 0 && len(f.configMaps) == 0 {
		return errors.New("give a candidate: --policy-dir DIR, --bundle X or --configmap FILE (see --help)")
	}
	now, cfg, err := f.decision.parse()
	if err != nil {
		return err
	}
	// A snapshot gets the gates the manager would create, as eval gives it.
	r, scope, err := f.cluster.Reader(ctx, f.snapshot, evaluation.EnsureGates)
	if err != nil {
		return err
	}
	current := policyset.Sources{Bundles: f.currentBundles, Namespace: f.policyNS}
	before, err := current.Engine(ctx, r, stderr)
	if err != nil {
		return fmt.Errorf("the policies in force: %w", err)
	}
	next := policyset.Sources{Dir: f.dir, Bundles: append(slices.Clone(f.currentBundles), f.bundles...), Namespace: f.policyNS}
	after, err := next.Candidate(ctx, r, f.configMaps)
	if err != nil {
		return err
	}
	inForce, candidate := evaluation.New(r, before, cfg, now, stderr), evaluation.New(r, after, cfg, now, stderr)
	inForce.Namespace, candidate.Namespace = f.cluster.Namespace(), f.cluster.Namespace()
	if len(f.snapshot) == 0 { // live: OLM v1 catalogs' content through the API server
		rc, err := f.cluster.RESTConfig()
		if err != nil {
			return err
		}
		if inForce.Content, err = kubeconn.NewCatalogs(rc); err != nil {
			return err
		}
		candidate.Content = inForce.Content
	}
	report, err := impact.Compare(ctx, inForce, candidate, scope)
	if err != nil {
		return err
	}
	if err := f.output.Print(stdout, report.Printable()); err != nil {
		return err
	}
	if f.failOnBlock && report.Summary.NewlyBlocked > 0 {
		return &exitError{code: exitNewlyBlocked, err: fmt.Errorf("the candidate would newly block %d upgrade(s) (--fail-on-block)", report.Summary.NewlyBlocked)}
	}
	return nil
}
