// Package approval is the one place that decides a Subscription's upgrade and whether
// Tollgate may approve an InstallPlan. The manager, `tollgate eval` and `tollgate explain`
// all call a Decider over a client.Reader (the informer cache, a live client, or a snapshot),
// so they cannot disagree.
//
// OLM bundles a namespace's pending installs into one InstallPlan, so approving a plan
// approves every CSV it lists, and every CSV of the namespace they replace. The invariant
// Tollgate keeps (verdict.go): every CSV a plan creates or replaces has a decision that
// allows it, on facts the policies saw. A CSV is decided by every Subscription that claims it
// (status.currentCSV, or the same package as one that does: each with an UpgradeGate in
// Enforce mode, approving manually, and a decision that says allowed: true), or, with none,
// as the dependency the plan subscribes to: the Subscription OLM would create, gathered and
// evaluated through every policy before it exists (dependency.go). What a plan says of a CSV
// is read from every place it says it (InstallPlan.FactsOf); where they disagree, it holds. A
// Subscription's decision sees the other operators of its plans (input.installPlanPeers)
// through their own decisions, evaluated now from the same reader without their plan
// companions, never through a stored gate status that may predate a change.
package approval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// Evaluator evaluates one input document with the policies in force; *engine.Engine is one.
type Evaluator interface {
	Evaluate(ctx context.Context, input map[string]any) *engine.Result
}

// Decider decides Subscriptions and judges InstallPlans from what Reader holds.
type Decider struct {
	Reader   client.Reader
	Policies Evaluator
	Input    input.Config
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Decision is one Subscription's input, the policies' result on it, and the verdict on each
// of its pending InstallPlans.
type Decision struct {
	*input.Document
	Result *engine.Result
	// Peers are the other operators its pending plans install, with their own decisions.
	Peers []Peer
	// Plans are the verdicts on Document.PendingInstallPlans, in the same order.
	Plans []Verdict
}

// Peer is another CSV that one of the Subscription's pending plans installs.
type Peer struct {
	InstallPlan string
	CSV         string
	// Subscription claims the CSV: the first claimant whose own decision is not allowed, else
	// the first by name; nil when none claims it.
	Subscription *types.NamespacedName
	// Document and Result are that Subscription's input and own decision, evaluated without
	// its plan companions (nil without a Subscription).
	Document *input.Document
	Result   *engine.Result
	// Dependency, with no Subscription, is the Subscription the plan creates for the CSV;
	// Document and Result are then the decision on it, made before OLM creates it.
	Dependency *v1alpha1.Dependency
	// Unattributed says why the CSV cannot be attributed to one operator (what the plan says
	// of it cannot be read, or names several packages, Subscription steps or replaced CSVs);
	// "" when it can. Such a peer blocks whatever its decision.
	Unattributed string
}

// Verdict says whether Tollgate may approve one InstallPlan, and if not, why.
type Verdict struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	CSVs      []string `json:"csvs"`
	// Approvable is true only when the plan is eligible and nothing blocks it.
	Approvable bool `json:"approve"`
	// Ineligible says why the plan is not Tollgate's to approve (not Manual, already
	// approved, not waiting in RequiresApproval, lists no CSV); "" when it is.
	Ineligible string `json:"ineligible,omitempty"`
	// Blockers are the CSVs that hold an eligible plan, one each.
	Blockers []Blocker `json:"blockers"`
}

// Decide gathers and evaluates the Subscription key and judges its pending plans. It returns
// (nil, nil) when the Subscription does not exist; an error only when a read failed.
func (d *Decider) Decide(ctx context.Context, key types.NamespacedName) (*Decision, error) {
	doc, err := d.Gather(ctx, key)
	if doc == nil || err != nil {
		return nil, err
	}
	return d.DecideGathered(ctx, doc)
}

// Gather reads the objects of the Subscription key's input document, as Decide would,
// without building the document or evaluating it: a caller may look at the typed objects
// before deciding (DecideGathered). It returns (nil, nil) when the Subscription does not
// exist.
func (d *Decider) Gather(ctx context.Context, key types.NamespacedName) (*input.Document, error) {
	return d.builder().Read(ctx, key)
}

// DecideGathered is Decide on doc, a document Gather returned from the same reader and not
// evaluated yet; its input document is built now.
func (d *Decider) DecideGathered(ctx context.Context, doc *input.Document) (*Decision, error) {
	s := d.session()
	m, err := s.fullOf(ctx, doc.Complete())
	if err != nil {
		return nil, err
	}
	dec := &Decision{Document: m.doc, Result: m.result, Peers: m.peers}
	for i := range m.doc.PendingInstallPlans {
		v, err := s.verdict(ctx, &m.doc.PendingInstallPlans[i])
		if err != nil {
			return nil, err
		}
		dec.Plans = append(dec.Plans, v)
	}
	dec.heldByAMove(s.denied[client.ObjectKeyFromObject(m.doc.Subscription)])
	return dec, nil
}

// heldByAMove makes the decision, when it allows, denied: the decision on a move of its pending
// plans that its own document denied (a CSV up the replacement chain, this plan's version), so
// that the gate says what holds its plan, with that move's facts and remedies, never "allowed"
// beside a plan it holds.
func (dec *Decision) heldByAMove(denied *member) {
	if denied == nil || !dec.Result.Decision.Allowed {
		return
	}
	doc := *dec.Document
	doc.Doc = denied.doc.Doc
	dec.Document, dec.Result = &doc, denied.result
}

// Judge is the verdict on plan, whichever Subscription wants it.
func (d *Decider) Judge(ctx context.Context, plan *v1alpha1.InstallPlan) (Verdict, error) {
	return d.session().verdict(ctx, plan)
}

// ineligible says why plan is not Tollgate's to approve, or "" when it is: only Manual plans
// that are not approved yet, wait in RequiresApproval and list at least one CSV, none of them
// with an empty name (which a Subscription without status would seem to claim).
func ineligible(plan *v1alpha1.InstallPlan) string {
	phase := v1alpha1.InstallPlanPhaseNone
	if plan.Status != nil {
		phase = plan.Status.Phase
	}
	switch {
	case plan.Spec.Approval != v1alpha1.ApprovalManual:
		return fmt.Sprintf("plan approval is %q, not Manual", plan.Spec.Approval)
	case plan.Spec.Approved:
		return "plan is already approved" + byTollgate(plan)
	case phase != v1alpha1.InstallPlanPhaseRequiresApproval:
		return fmt.Sprintf("plan phase is %q, not RequiresApproval", phase)
	case len(plan.Spec.ClusterServiceVersionNames) == 0:
		return "plan lists no ClusterServiceVersion"
	case slices.Contains(plan.Spec.ClusterServiceVersionNames, ""):
		return "plan lists a ClusterServiceVersion with an empty name"
	}
	return ""
}

// byTollgate says which gate's decision approved plan, when its approval record says so.
func byTollgate(plan *v1alpha1.InstallPlan) string {
	rec, ok := tollgatev1alpha1.RecordedApproval(plan.Annotations)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (by Tollgate, on the decision of gate %s, policy revision %s, at %s)", rec.Gate, rec.PolicyRevision, rec.ApprovedAt.UTC().Format(time.RFC3339))
}

// WhyNot is the verdict for a person: "" when approvable, else why not.
func (v Verdict) WhyNot() string {
	if v.Approvable {
		return ""
	}
	if v.Ineligible != "" {
		return v.Ineligible
	}
	whys := make([]string, 0, len(v.Blockers))
	for _, b := range v.Blockers {
		whys = append(whys, b.String())
	}
	return "blocked: " + strings.Join(whys, "; ")
}

// EffectiveMode is the gate's spec.mode, or def when empty.
func EffectiveMode(gate *tollgatev1alpha1.UpgradeGate, def tollgatev1alpha1.Mode) tollgatev1alpha1.Mode {
	if gate == nil {
		return def
	}
	return gate.Spec.Mode.Or(def)
}

// Mode is the effective mode of gate under this Decider: its spec.mode, or the configured
// default.
func (d *Decider) Mode(gate *tollgatev1alpha1.UpgradeGate) tollgatev1alpha1.Mode {
	return EffectiveMode(gate, d.Input.WithDefaults().DefaultMode)
}

// ApprovalOf is the Subscription's installPlanApproval; OLM's default is Automatic.
func ApprovalOf(sub *v1alpha1.Subscription) v1alpha1.Approval {
	if sub.Spec == nil || sub.Spec.InstallPlanApproval == "" {
		return v1alpha1.ApprovalAutomatic
	}
	return sub.Spec.InstallPlanApproval
}

// Standing are the codes of the denials that stand (not overridden), in order.
func Standing(d engine.Decision) []string {
	codes := []string{}
	for _, den := range d.Denials {
		if !den.Overridden && !slices.Contains(codes, den.Code) {
			codes = append(codes, den.Code)
		}
	}
	return codes
}
