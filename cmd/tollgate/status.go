package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/policysource"
	"github.com/tollgate-dev/tollgate/printers"
)

func init() { extraCommands = append(extraCommands, newStatusCommand) }

// statusReport is the output of `tollgate status -o json`; cmd/tollgate/README.md documents it.
type statusReport struct {
	Now                      string        `json:"now"`
	Scope                    string        `json:"scope"`
	Gates                    gateCounts    `json:"gates"`
	SubscriptionsWithoutGate int           `json:"subscriptionsWithoutGate"`
	ByCode                   []codeCount   `json:"byCode"`
	HeldLongest              []heldGate    `json:"heldLongest"`
	InstallPlans             planCounts    `json:"installPlans"`
	Policy                   policyInForce `json:"policy"`
}

type gateCounts struct {
	Total      int `json:"total"`
	Allowed    int `json:"allowed"`
	Held       int `json:"held"`
	NoDecision int `json:"noDecision"`
}

type codeCount struct {
	Code  string `json:"code"`
	Gates int    `json:"gates"`
}

type heldGate struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Since is when the hold began (RFC 3339), "" when the gate does not say.
	Since   string `json:"since"`
	Code    string `json:"code"`
	Message string `json:"message"`

	since    time.Time
	revision string // the policy revision of the decision, for -o wide
}

type planCounts struct {
	Pending          int       `json:"pending"`
	AwaitingApproval int       `json:"awaitingApproval"`
	Awaiting         []planRef `json:"awaiting"`
}

type planRef struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	CSVs      []string `json:"csvs"`
}

type policyInForce struct {
	Revision  string          `json:"revision"`
	Revisions []revisionCount `json:"revisions"`
	Sources   []sourceHealth  `json:"sources"`
}

type revisionCount struct {
	Revision string `json:"revision"`
	Gates    int    `json:"gates"`
	// LastEvaluatedAt is the newest status.decision.evaluatedAt among those gates.
	LastEvaluatedAt string `json:"lastEvaluatedAt"`

	last time.Time
}

type sourceHealth struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Status is ok or error as the manager reported it, unknown when it has not (yet).
	Status  string   `json:"status"`
	Serving string   `json:"serving"`
	Errors  []string `json:"errors"`
}

type statusFlags struct {
	cluster  clusterFlags
	all      bool
	snapshot []string
	policyNS string
	limit    int
	now      string
	output   *outputFlags
}

func newStatusCommand() *cobra.Command {
	f := statusFlags{output: newOutputFlags("table", "wide", "json", "yaml", "name")}
	cmd := &cobra.Command{
		Use:   "status [-n NAMESPACE | -A]",
		Short: "Summarise what Tollgate holds: gates by state and code, the longest holds, plans, policy health",
		Long: `Read the UpgradeGates (what the manager decided and recorded; nothing is evaluated again), the
InstallPlans and the policy ConfigMaps, and print:

  - the gates by state (allowed, held, no decision yet) and the held ones by denial code;
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	f.cluster.bind(cmd)
	cmd.Flags().Lookup("namespace").Usage = "only this namespace's gates and plans (default: all namespaces)"
	cmd.Flags().BoolVarP(&f.all, "all-namespaces", "A", false, "every namespace's gates and plans (the default without -n)")
	cmd.Flags().StringSliceVar(&f.snapshot, "snapshot", nil, "read this YAML/JSON file or folder of cluster state instead of the live cluster (repeatable)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy)")
	cmd.Flags().IntVar(&f.limit, "limit", 10, "how many of the longest holds to list")
	cmd.Flags().StringVar(&f.now, "now", "", "the current time for the hold durations, RFC 3339 (default: now)")
	f.output.bind(cmd)
	return cmd
}

func runStatus(ctx context.Context, stdout io.Writer, f statusFlags) error {
	if err := f.output.validate(); err != nil {
		return err
	}
	if f.limit < 0 {
		return errors.New("--limit must be 0 or more")
	}
	if f.all && f.cluster.namespace() != "" {
		return errors.New("give either -n NAMESPACE or -A, not both")
	}
	now, err := parseNow(f.now)
	if err != nil {
		return err
	}
	r, scope, err := f.cluster.reader(ctx, f.snapshot, nil)
	if err != nil {
		return err
	}
	rep := &statusReport{Now: now.Format(time.RFC3339), Scope: scope}
	if err := rep.readGates(ctx, r, f.cluster.namespace(), f.limit); err != nil {
		return err
	}
	if err := rep.readPlans(ctx, r, f.cluster.namespace()); err != nil {
		return err
	}
	if err := rep.readSources(ctx, r, f.policyNS); err != nil {
		return err
	}
	return f.output.print(stdout, rep.printable())
}

// printable is the report in every output format: -o name lists the longest-held gates.
func (rep *statusReport) printable() printable {
	return printable{
		doc:   rep,
		human: func(w io.Writer, o printers.TableOptions) error { return renderStatusTable(w, rep, o) },
		names: func() []printers.Ref {
			refs := make([]printers.Ref, len(rep.HeldLongest))
			for i, h := range rep.HeldLongest {
				refs[i] = printers.Ref{GroupKind: upgradeGateKind, Name: h.Name}
			}
			return refs
		},
	}
}

// readGates counts the gates and the Subscriptions without one, and finds the longest holds.
func (rep *statusReport) readGates(ctx context.Context, r client.Reader, ns string, limit int) error {
	var gates tollgatev1alpha1.UpgradeGateList
	if err := r.List(ctx, &gates, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list upgrade gates: %w", err)
	}
	var subs v1alpha1.SubscriptionList
	if err := r.List(ctx, &subs, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list subscriptions: %w", err)
	}
	gated := map[client.ObjectKey]bool{}
	codes := map[string]int{}
	revisions := map[string]*revisionCount{}
	rep.HeldLongest = []heldGate{}
	for i := range gates.Items {
		g := &gates.Items[i]
		gated[client.ObjectKeyFromObject(g)] = true
		rep.Gates.Total++
		d := g.Status.Decision
		if d.EvaluatedAt == nil && d.PolicyRevision == "" {
			rep.Gates.NoDecision++
			continue
		}
		countRevision(revisions, d)
		if d.Allowed {
			rep.Gates.Allowed++
			continue
		}
		rep.Gates.Held++
		for _, c := range standingCodes(d.Denials) {
			codes[c]++
		}
		rep.HeldLongest = append(rep.HeldLongest, holdOf(g))
	}
	for i := range subs.Items {
		if !gated[client.ObjectKeyFromObject(&subs.Items[i])] {
			rep.SubscriptionsWithoutGate++
		}
	}
	rep.ByCode = []codeCount{}
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		rep.ByCode = append(rep.ByCode, codeCount{Code: c, Gates: codes[c]})
	}
	slices.SortStableFunc(rep.ByCode, func(a, b codeCount) int { return b.Gates - a.Gates })
	slices.SortStableFunc(rep.HeldLongest, func(a, b heldGate) int { return compareSince(a.since, b.since) })
	rep.HeldLongest = rep.HeldLongest[:min(limit, len(rep.HeldLongest))]
	rep.Policy.Revisions, rep.Policy.Revision = rankRevisions(revisions)
	return nil
}

func standingCodes(denials []tollgatev1alpha1.Denial) []string {
	var out []string
	for _, d := range denials {
		if !d.Overridden && !slices.Contains(out, d.Code) {
			out = append(out, d.Code)
		}
	}
	return out
}

// holdOf says since when and by what a held gate holds: since the UpgradeBlocked condition
// turned True (a hold that changes codes stays one hold), else since the decision.
func holdOf(g *tollgatev1alpha1.UpgradeGate) heldGate {
	d := g.Status.Decision
	h := heldGate{Namespace: g.Namespace, Name: g.Name, Code: d.BlockedBy, revision: d.PolicyRevision}
	if c := meta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionUpgradeBlocked); c != nil && c.Status == "True" && !c.LastTransitionTime.IsZero() {
		h.since, h.Message = c.LastTransitionTime.UTC(), c.Message
	} else if d.EvaluatedAt != nil {
		h.since = d.EvaluatedAt.UTC()
	}
	for _, den := range d.Denials {
		if !den.Overridden {
			if h.Code == "" {
				h.Code = den.Code
			}
			if den.Code == h.Code {
				h.Message = den.Message
			}
			break
		}
	}
	if !h.since.IsZero() {
		h.Since = h.since.Format(time.RFC3339)
	}
	return h
}

// compareSince orders the oldest hold first, and holds of unknown start last.
func compareSince(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

func countRevision(revisions map[string]*revisionCount, d tollgatev1alpha1.Decision) {
	if d.PolicyRevision == "" {
		return
	}
	rc := revisions[d.PolicyRevision]
	if rc == nil {
		rc = &revisionCount{Revision: d.PolicyRevision}
		revisions[d.PolicyRevision] = rc
	}
	rc.Gates++
	if d.EvaluatedAt != nil && d.EvaluatedAt.After(rc.last) {
		rc.last = d.EvaluatedAt.UTC()
		rc.LastEvaluatedAt = rc.last.Format(time.RFC3339)
	}
}

// rankRevisions sorts the revisions by gates, then newest first; the first is the one in force.
func rankRevisions(revisions map[string]*revisionCount) ([]revisionCount, string) {
	out := []revisionCount{}
	for _, rc := range revisions {
		out = append(out, *rc)
	}
	slices.SortFunc(out, func(a, b revisionCount) int {
		return cmp.Or(b.Gates-a.Gates, b.last.Compare(a.last), strings.Compare(a.Revision, b.Revision))
	})
	if len(out) == 0 {
		return out, ""
	}
	return out, out[0].Revision
}

// readPlans counts the plans not yet Complete or Failed, and lists those awaiting approval
// (Manual, not approved, in RequiresApproval).
func (rep *statusReport) readPlans(ctx context.Context, r client.Reader, ns string) error {
	var plans v1alpha1.InstallPlanList
	if err := r.List(ctx, &plans, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list install plans: %w", err)
	}
	rep.InstallPlans.Awaiting = []planRef{}
	for _, p := range plans.Items {
		phase := v1alpha1.InstallPlanPhaseNone
		if p.Status != nil {
			phase = p.Status.Phase
		}
		if phase == v1alpha1.InstallPlanPhaseComplete || phase == v1alpha1.InstallPlanPhaseFailed {
			continue
		}
		rep.InstallPlans.Pending++
		if p.Spec.Approval == v1alpha1.ApprovalManual && !p.Spec.Approved && phase == v1alpha1.InstallPlanPhaseRequiresApproval {
			rep.InstallPlans.AwaitingApproval++
			rep.InstallPlans.Awaiting = append(rep.InstallPlans.Awaiting, planRef{Namespace: p.Namespace, Name: p.Name, CSVs: orEmpty(p.Spec.ClusterServiceVersionNames)})
		}
	}
	return nil
}

// readSources reports each policy ConfigMap's health from the manager's status annotation.
func (rep *statusReport) readSources(ctx context.Context, r client.Reader, ns string) error {
	cms, err := policysource.List(ctx, r, ns)
	if err != nil {
		return err
	}
	rep.Policy.Sources = []sourceHealth{}
	for _, cm := range cms {
		h := sourceHealth{Name: cm.Name, Kind: cm.Labels[policysource.Label], Status: "unknown", Errors: []string{}}
		if raw, ok := cm.Annotations[policysource.StatusAnnotation]; ok {
			var st policysource.Status
			if err := json.Unmarshal([]byte(raw), &st); err != nil {
				h.Status, h.Errors = "unreadable", []string{fmt.Sprintf("the %s annotation is not JSON: %v", policysource.StatusAnnotation, err)}
			} else {
				h.Status, h.Serving = st.Status, st.Serving
				for _, it := range st.Errors {
					h.Errors = append(h.Errors, it.String())
				}
			}
		}
		rep.Policy.Sources = append(rep.Policy.Sources, h)
	}
	return nil
}

// renderStatusTable prints the status report for a person. -o wide adds the policy revision
// of each long hold.
func renderStatusTable(w io.Writer, rep *statusReport, o printers.TableOptions) error {
	g := rep.Gates
	o.Title(w, "Tollgate status of %s at %s.\n\n", printers.Escape(rep.Scope), rep.Now)
	o.Title(w, "GATES  %d: %d allowed, %d held, %d without a decision yet", g.Total, g.Allowed, g.Held, g.NoDecision)
	if rep.SubscriptionsWithoutGate > 0 {
		o.Title(w, "; %d Subscription(s) have no gate yet", rep.SubscriptionsWithoutGate)
	}
	o.Title(w, "\n")
	if len(rep.ByCode) > 0 {
		o.Title(w, "\nHELD BY CODE\n")
		t := o.NewTable(w, "CODE", "GATES")
		for _, c := range rep.ByCode {
			t.Row(c.Code, fmt.Sprint(c.Gates))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if err := renderHolds(w, rep, o); err != nil {
		return err
	}
	p := rep.InstallPlans
	o.Title(w, "\nINSTALL PLANS  %d pending, %d awaiting approval\n", p.Pending, p.AwaitingApproval)
	if len(p.Awaiting) > 0 {
		t := o.NewTable(w, "NAMESPACE", "NAME", "CSVS")
		for _, a := range p.Awaiting {
			t.Row(a.Namespace, a.Name, strings.Join(a.CSVs, ", "))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	return renderPolicyHealth(w, rep.Policy, o)
}

func renderHolds(w io.Writer, rep *statusReport, o printers.TableOptions) error {
	if len(rep.HeldLongest) == 0 {
		return nil
	}
	now, _ := time.Parse(time.RFC3339, rep.Now)
	o.Title(w, "\nHELD LONGEST (%d of %d)\n", len(rep.HeldLongest), rep.Gates.Held)
	t := o.NewTable(w, o.Columns([]string{"NAMESPACE", "NAME", "HELD SINCE", "FOR", "CODE", "MESSAGE"}, "POLICY REVISION")...)
	for _, h := range rep.HeldLongest {
		since, held := "unknown", ""
		if !h.since.IsZero() {
			since, held = h.Since, humanDuration(now.Sub(h.since))
		}
		t.Row(o.Columns([]string{h.Namespace, h.Name, since, held, h.Code, h.Message}, h.revision)...)
	}
	return t.Flush()
}

func renderPolicyHealth(w io.Writer, p policyInForce, o printers.TableOptions) error {
	o.Title(w, "\nPOLICY\n")
	switch len(p.Revisions) {
	case 0:
		o.Title(w, "  revision in force: unknown (no gate records a decision)\n")
	default:
		others := make([]string, 0, len(p.Revisions)-1)
		for _, rc := range p.Revisions[1:] {
			others = append(others, fmt.Sprintf("%s on %d", printers.Escape(rc.Revision), rc.Gates))
		}
		o.Title(w, "  revision in force: %s (%d gate(s))", printers.Escape(p.Revision), p.Revisions[0].Gates)
		if len(others) > 0 {
			o.Title(w, "; older decisions: %s", strings.Join(others, ", "))
		}
		o.Title(w, "\n")
	}
	if len(p.Sources) == 0 {
		o.Title(w, "  no policy ConfigMap: the embedded policies (and bundles) only\n")
		return nil
	}
	t := o.NewTable(w, "CONFIGMAP", "KIND", "STATUS", "SERVING", "ERRORS")
	for _, s := range p.Sources {
		t.Row(s.Name, s.Kind, s.Status, s.Serving, strings.Join(s.Errors, "; "))
	}
	return t.Flush()
}

// humanDuration is d in days, hours and minutes: 2d3h, 5h12m, 4m.
func humanDuration(d time.Duration) string {
	if d < 0 {
		return "0m"
	}
	days, hours, mins := int(d.Hours())/24, int(d.Hours())%24, int(d.Minutes())%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	}
	return fmt.Sprintf("%dm", mins)
}
