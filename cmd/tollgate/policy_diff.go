package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/evaluation"
	"github.com/tollgate-dev/tollgate/impact"
	"github.com/tollgate-dev/tollgate/policysource"
	"github.com/tollgate-dev/tollgate/printers"
)

// exitNewlyBlocked is the exit code of `policy diff --fail-on-block` when the candidate would
// newly block an upgrade (the same as eval --fail-on-deny).
const exitNewlyBlocked = exitDenied

type policyDiffFlags struct {
	cluster        clusterFlags
	snapshot       []string
	currentBundles []string
	policyNS       string
	dir            string
	bundles        []string
	configMaps     []string
	decision       decisionFlags
	output         *outputFlags
	failOnBlock    bool
}

func newPolicyDiffCommand() *cobra.Command {
	f := policyDiffFlags{output: newOutputFlags("table", "wide", "json", "yaml", "name").withTables(impact.Tables...)}
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
whose verdict changes; and a summary.

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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPolicyDiff(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	f.cluster.bind(cmd)
	cmd.Flags().Lookup("namespace").Usage = "only the Subscriptions of this namespace (default: all namespaces)"
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "diff on this YAML/JSON file or folder of cluster state instead of the live cluster (repeatable)")
	cmd.Flags().StringSliceVar(&f.currentBundles, "current-bundle", nil, "an OPA bundle the manager runs with (its --bundle), part of both policy sets (repeatable)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) in force")
	cmd.Flags().StringVar(&f.dir, "policy-dir", "", "candidate: folder of .rego modules added (a file with the path of an embedded one replaces it); *_test.rego skipped")
	cmd.Flags().StringSliceVar(&f.bundles, "bundle", nil, "candidate: an OPA bundle added (directory, .tar.gz or URL; repeatable)")
	cmd.Flags().StringArrayVar(&f.configMaps, "configmap", nil, "candidate: a YAML/JSON file of policy ConfigMaps that replace those of the same name or are added (repeatable)")
	f.decision.bind(cmd)
	f.output.bind(cmd)
	cmd.Flags().BoolVar(&f.failOnBlock, "fail-on-block", false, fmt.Sprintf("exit with status %d when the candidate would newly block an upgrade", exitNewlyBlocked))
	return cmd
}

func runPolicyDiff(ctx context.Context, stdout, stderr io.Writer, f policyDiffFlags) error {
	if err := f.output.validate(); err != nil {
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
	r, scope, err := f.cluster.reader(ctx, f.snapshot, evaluation.EnsureGates)
	if err != nil {
		return err
	}
	current := policyFlags{bundles: f.currentBundles, namespace: f.policyNS}
	before, err := current.engine(ctx, r, stderr)
	if err != nil {
		return fmt.Errorf("the policies in force: %w", err)
	}
	after, err := f.candidate(ctx, r)
	if err != nil {
		return err
	}
	inForce, candidate := evaluation.New(r, before, cfg, now, stderr), evaluation.New(r, after, cfg, now, stderr)
	inForce.Namespace, candidate.Namespace = f.cluster.namespace(), f.cluster.namespace()
	report, err := impact.Compare(ctx, inForce, candidate, scope)
	if err != nil {
		return err
	}
	if err := f.output.print(stdout, diffPrintable(report)); err != nil {
		return err
	}
	if f.failOnBlock && report.Summary.NewlyBlocked > 0 {
		return &exitError{code: exitNewlyBlocked, err: fmt.Errorf("the candidate would newly block %d upgrade(s) (--fail-on-block)", report.Summary.NewlyBlocked)}
	}
	return nil
}

// candidate compiles the candidate policy set: the in-force bundles and --bundle, the policy
// ConfigMaps read through r with --configmap's replacing those of the same name, and
// --policy-dir last. Anything that keeps it from compiling is an error naming the file.
func (f *policyDiffFlags) candidate(ctx context.Context, r client.Reader) (*engine.Engine, error) {
	pf := policyFlags{dir: f.dir, bundles: append(slices.Clone(f.currentBundles), f.bundles...), namespace: f.policyNS}
	base, local, err := pf.base(ctx)
	if err != nil {
		return nil, fmt.Errorf("the candidate: %w", err)
	}
	own := base
	own.Modules = append(slices.Clone(base.Modules), local...)
	e, err := engine.New(ctx, own)
	if err != nil {
		return nil, candidateError(err, nil, f.dir, local, nil)
	}
	cms, _ := policysource.List(ctx, r, f.policyNS) // unreadable: left out, as for the policies in force (warned)
	files := map[string]string{}
	for _, path := range f.configMaps {
		read, err := policysource.ReadConfigMapFile(path, f.policyNS)
		if err != nil {
			return nil, fmt.Errorf("--configmap %w", err)
		}
		for _, cm := range read {
			files[cm.Name] = path
			cms = slices.DeleteFunc(cms, func(c corev1.ConfigMap) bool { return c.Name == cm.Name })
			cms = append(cms, cm)
		}
	}
	if len(cms) == 0 {
		return e, nil
	}
	slices.SortFunc(cms, func(a, b corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	set := policysource.Assemble(base, cms)
	set.Options.Modules = append(set.Options.Modules, local...)
	if e, err = set.Compile(ctx); err != nil || e != nil {
		return e, err
	}
	var items []engine.CompileErrorItem
	for _, name := range slices.Sorted(maps.Keys(set.Problems)) {
		for _, it := range set.Problems[name] {
			if it.File == "" || !strings.HasPrefix(it.File, "configmap/") {
				it.Message = configMapLabel(name, files) + ": " + it.Message
			}
			items = append(items, it)
		}
	}
	return nil, candidateError(&engine.CompileError{Items: items}, files, f.dir, local, set.Origin)
}

func configMapLabel(name string, files map[string]string) string {
	switch {
	case name == "":
		return "an OPA bundle"
	case files[name] != "":
		return fmt.Sprintf("%s (ConfigMap %s)", files[name], name)
	default:
		return "ConfigMap " + name + " (in force)"
	}
}

// candidateError names each problem's file as the author knows it: the --policy-dir file, or
// the --configmap file and key.
func candidateError(err error, files map[string]string, dir string, local []engine.Module, origin map[string]string) error {
	var ce *engine.CompileError
	if !errors.As(err, &ce) {
		return fmt.Errorf("the candidate: %w", err)
	}
	lines := make([]string, 0, len(ce.Items))
	for _, it := range ce.Items {
		switch name, fromCM := origin[it.File]; {
		case slices.ContainsFunc(local, func(m engine.Module) bool { return m.Path == it.File }):
			it.File = filepath.Join(dir, filepath.FromSlash(it.File))
		case fromCM:
			it.File = configMapLabel(name, files) + " key " + strings.TrimPrefix(it.File, "configmap/"+name+"/")
		}
		lines = append(lines, "  "+it.String())
	}
	return fmt.Errorf("the candidate policies do not compile; nothing is compared. Fix:\n%s", strings.Join(lines, "\n"))
}

// printable is the report in every output format: -o name lists the Subscriptions whose
// decision changes.
func diffPrintable(r *impact.Report) printable {
	return printable{
		doc:   r,
		human: r.WriteTable,
		names: func() []printers.Ref {
			refs := make([]printers.Ref, len(r.Changes))
			for i, c := range r.Changes {
				refs[i] = printers.Ref{GroupKind: subscriptionKind, Name: c.Name}
			}
			return refs
		},
	}
}
