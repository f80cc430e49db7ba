package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/approval"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/input"
	"github.com/tollgate-dev/tollgate/policysource"
	"github.com/tollgate-dev/tollgate/printers"
)

// exitNewlyBlocked is the exit code of `policy diff --fail-on-block` when the candidate would
// newly block an upgrade (the same as eval --fail-on-deny).
const exitNewlyBlocked = exitDenied

// diffReport is the output of `tollgate policy diff -o json`; cmd/tollgate/README.md documents
// it. The unexported fields are for the table only.
type diffReport struct {
	Summary diffSummary          `json:"summary"`
	Changes []subscriptionChange `json:"changes"`

	before, after string // policy revisions
	scope         string
	plans         []planChange
}

type diffSummary struct {
	NewlyBlocked int `json:"newlyBlocked"`
	NewlyAllowed int `json:"newlyAllowed"`
	Changed      int `json:"changed"`
	Unchanged    int `json:"unchanged"`
}

type subscriptionChange struct {
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Before    verdictCodes `json:"before"`
	After     verdictCodes `json:"after"`
}

// verdictCodes is a decision reduced to what a diff compares: allowed, and the standing
// (not overridden) denial codes, sorted.
type verdictCodes struct {
	Allowed bool     `json:"allowed"`
	Codes   []string `json:"codes"`
}

func (v verdictCodes) String() string {
	if v.Allowed {
		return "allowed"
	}
	if len(v.Codes) == 0 {
		return "denied"
	}
	return "held: " + strings.Join(v.Codes, ", ")
}

type planChange struct {
	key           types.NamespacedName
	before, after approval.Verdict
}

// outcomes are the decisions of one policy set: per Subscription, and per pending plan.
type outcomes struct {
	subs  map[types.NamespacedName]verdictCodes
	plans map[types.NamespacedName]approval.Verdict
}

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
	f := policyDiffFlags{output: newOutputFlags("table", "wide", "json", "yaml", "name").withTables(diffTables...)}
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
	r, scope, err := f.cluster.reader(ctx, f.snapshot, ensureGates)
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
	ns := f.cluster.namespace()
	was, err := decideAll(ctx, r, before, cfg, now, ns)
	if err != nil {
		return err
	}
	will, err := decideAll(ctx, r, after, cfg, now, ns)
	if err != nil {
		return err
	}
	report := compareOutcomes(was, will)
	report.before, report.after, report.scope = before.Revision(), after.Revision(), scope
	if err := f.output.print(stdout, report.printable()); err != nil {
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
		read, err := readPolicyConfigMaps(path, f.policyNS)
		if err != nil {
			return nil, err
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

// readPolicyConfigMaps reads the ConfigMaps of a YAML or JSON file (one or more documents).
func readPolicyConfigMaps(path, namespace string) ([]corev1.ConfigMap, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--configmap: %w", err)
	}
	defer func() { _ = file.Close() }()
	dec := utilyaml.NewYAMLOrJSONDecoder(io.LimitReader(file, 16<<20), 4096)
	var out []corev1.ConfigMap
	for doc := 1; ; doc++ {
		var cm corev1.ConfigMap
		err := dec.Decode(&cm)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--configmap %s: document %d: %w", path, doc, err)
		}
		if cm.Kind == "" && cm.Name == "" && len(cm.Data) == 0 {
			continue // an empty document
		}
		if err := checkPolicyConfigMap(&cm, namespace); err != nil {
			return nil, fmt.Errorf("--configmap %s: document %d: %w", path, doc, err)
		}
		out = append(out, cm)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--configmap %s holds no ConfigMap", path)
	}
	return out, nil
}

func checkPolicyConfigMap(cm *corev1.ConfigMap, namespace string) error {
	switch {
	case cm.APIVersion != "v1" || cm.Kind != "ConfigMap":
		return fmt.Errorf("a %s %q, not a v1 ConfigMap", cm.Kind, cm.APIVersion)
	case cm.Name == "":
		return errors.New("the ConfigMap has no metadata.name")
	case cm.Namespace != "" && cm.Namespace != namespace:
		return fmt.Errorf("ConfigMap %s is in namespace %s, but the policy ConfigMaps are in %s (--policy-namespace)", cm.Name, cm.Namespace, namespace)
	case cm.Labels[policysource.Label] == "":
		return fmt.Errorf("ConfigMap %s has no label %s (rego or data): the manager would not read it", cm.Name, policysource.Label)
	}
	cm.Namespace = namespace
	return nil
}

// decideAll decides every Subscription (of ns, or all when "") under eng.
func decideAll(ctx context.Context, r client.Reader, eng *engine.Engine, cfg input.Config, now time.Time, ns string) (*outcomes, error) {
	var subs v1alpha1.SubscriptionList
	if err := r.List(ctx, &subs, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	d := &approval.Decider{Reader: r, Policies: eng, Input: cfg, Now: func() time.Time { return now }}
	out := &outcomes{subs: map[types.NamespacedName]verdictCodes{}, plans: map[types.NamespacedName]approval.Verdict{}}
	for i := range subs.Items {
		key := client.ObjectKeyFromObject(&subs.Items[i])
		dec, err := d.Decide(ctx, key)
		if err != nil || dec == nil {
			return nil, fmt.Errorf("decide %s: %w", key, err)
		}
		v := verdictCodes{Allowed: dec.Result.Decision.Allowed, Codes: []string{}}
		for _, den := range dec.Result.Decision.Denials {
			if !den.Overridden && !slices.Contains(v.Codes, den.Code) {
				v.Codes = append(v.Codes, den.Code)
			}
		}
		slices.Sort(v.Codes)
		out.subs[key] = v
		for _, p := range dec.Plans {
			out.plans[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	return out, nil
}

// compareOutcomes lists what changes from was to will, in namespace and name order.
func compareOutcomes(was, will *outcomes) *diffReport {
	r := &diffReport{Changes: []subscriptionChange{}}
	keys := slices.SortedFunc(maps.Keys(was.subs), compareKeys)
	for _, k := range keys {
		b, a := was.subs[k], will.subs[k]
		switch {
		case b.Allowed && !a.Allowed:
			r.Summary.NewlyBlocked++
		case !b.Allowed && a.Allowed:
			r.Summary.NewlyAllowed++
		case !slices.Equal(b.Codes, a.Codes):
			r.Summary.Changed++
		default:
			r.Summary.Unchanged++
			continue
		}
		r.Changes = append(r.Changes, subscriptionChange{Namespace: k.Namespace, Name: k.Name, Before: b, After: a})
	}
	for _, k := range slices.SortedFunc(maps.Keys(was.plans), compareKeys) {
		b, a := was.plans[k], will.plans[k]
		if b.Approvable != a.Approvable || b.WhyNot() != a.WhyNot() {
			r.plans = append(r.plans, planChange{key: k, before: b, after: a})
		}
	}
	return r
}

func compareKeys(a, b types.NamespacedName) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// printable is the report in every output format: -o name lists the Subscriptions whose
// decision changes.
func (r *diffReport) printable() printable {
	return printable{
		doc:   r,
		human: func(w io.Writer, o printers.TableOptions) error { return renderDiffTable(w, r, o) },
		names: func() []printers.Ref {
			refs := make([]printers.Ref, len(r.Changes))
			for i, c := range r.Changes {
				refs[i] = printers.Ref{GroupKind: subscriptionKind, Name: c.Name}
			}
			return refs
		},
	}
}

// diffTables are the tables of policy diff's -o table and wide, as --only names them.
var diffTables = []string{"newly-blocked", "newly-allowed", "codes-changed", "plans"}

// diffGroups are the tables of changed Subscriptions, each with its title and its rows.
var diffGroups = []struct {
	name, title string
	keep        func(subscriptionChange) bool
}{
	{"newly-blocked", "NEWLY BLOCKED", func(c subscriptionChange) bool { return c.Before.Allowed && !c.After.Allowed }},
	{"newly-allowed", "NEWLY ALLOWED", func(c subscriptionChange) bool { return !c.Before.Allowed && c.After.Allowed }},
	{"codes-changed", "CODES CHANGED", func(c subscriptionChange) bool { return c.Before.Allowed == c.After.Allowed }},
}

// renderDiffTable prints the diff for a person, grouped by kind of change. -o wide adds the
// codes the candidate adds and removes; o.Only picks one table.
func renderDiffTable(w io.Writer, r *diffReport, o printers.TableOptions) error {
	if o.Whole() {
		o.Title(w, "Policy revision %s in force, candidate %s; %s.\n", printers.Escape(r.before), printers.Escape(r.after), printers.Escape(r.scope))
	}
	for _, g := range diffGroups {
		if err := renderChanges(w, r, o, g.name, g.title, g.keep); err != nil {
			return err
		}
	}
	if err := renderPlanChanges(w, r, o); err != nil {
		return err
	}
	if o.Whole() {
		s := r.Summary
		o.Title(w, "\nSummary: %d newly blocked, %d newly allowed, %d held by other codes, %d unchanged.\n", s.NewlyBlocked, s.NewlyAllowed, s.Changed, s.Unchanged)
	}
	return nil
}

func renderChanges(w io.Writer, r *diffReport, o printers.TableOptions, name, title string, keep func(subscriptionChange) bool) error {
	var rows []subscriptionChange
	for _, c := range r.Changes {
		if keep(c) {
			rows = append(rows, c)
		}
	}
	if !o.Shows(name) || len(rows) == 0 {
		return nil
	}
	o.Title(w, "%s%s (%d)\n", gap(o), title, len(rows))
	t := o.NewTable(w, o.Columns([]string{"NAMESPACE", "NAME", "IN FORCE", "CANDIDATE"}, "ADDED", "REMOVED")...)
	for _, c := range rows {
		t.Row(o.Columns([]string{c.Namespace, c.Name, c.Before.String(), c.After.String()},
			strings.Join(missing(c.After.Codes, c.Before.Codes), ", "), strings.Join(missing(c.Before.Codes, c.After.Codes), ", "))...)
	}
	return t.Flush()
}

func renderPlanChanges(w io.Writer, r *diffReport, o printers.TableOptions) error {
	if !o.Shows("plans") || len(r.plans) == 0 {
		return nil
	}
	o.Title(w, "%sINSTALL PLANS WHOSE VERDICT CHANGES (%d)\n", gap(o), len(r.plans))
	t := o.NewTable(w, "NAMESPACE", "NAME", "IN FORCE", "CANDIDATE")
	for _, p := range r.plans {
		t.Row(p.key.Namespace, p.key.Name, planWord(p.before), planWord(p.after))
	}
	return t.Flush()
}

// missing is the codes of a that b lacks.
func missing(a, b []string) []string {
	var out []string
	for _, c := range a {
		if !slices.Contains(b, c) {
			out = append(out, c)
		}
	}
	return out
}

func planWord(v approval.Verdict) string {
	if v.Approvable {
		return "approve"
	}
	return v.WhyNot()
}
