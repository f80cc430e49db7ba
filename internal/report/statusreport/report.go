package statusreport

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

// Report is the status summary; cmd/tollgate/README.md documents its JSON form.
type Report struct {
	Now                      string        `json:"now"`
	Scope                    string        `json:"scope"`
	Gates                    GateCounts    `json:"gates"`
	SubscriptionsWithoutGate int           `json:"subscriptionsWithoutGate"`
	ByCode                   []CodeCount   `json:"byCode"`
	HeldLongest              []HeldGate    `json:"heldLongest"`
	InstallPlans             PlanCounts    `json:"installPlans"`
	Policy                   PolicyInForce `json:"policy"`
	// ExtensionGates are the OLM v1 gates, when the cluster has any.
	ExtensionGates []ExtensionGate `json:"extensionGates,omitempty"`
	// Bypasses are the bypasses the gates of both kinds record, newest first; absent when none.
	Bypasses []Bypass `json:"bypasses,omitempty"`
}

// GateCounts counts the gates by the state of their recorded decision.
type GateCounts struct {
	Total      int `json:"total"`
	Allowed    int `json:"allowed"`
	Held       int `json:"held"`
	NoDecision int `json:"noDecision"`
}

// CodeCount is how many held gates a standing (not overridden) denial code holds.
type CodeCount struct {
	Code  string `json:"code"`
	Gates int    `json:"gates"`
}

// HeldGate is one held upgrade: since when, and by which code and message.
type HeldGate struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Since is when the hold began (RFC 3339), "" when the gate does not say.
	Since   string `json:"since"`
	Code    string `json:"code"`
	Message string `json:"message"`

	// Start is Since as a time, zero when the gate does not say.
	Start time.Time `json:"-"`
	// PolicyRevision is the policy revision of the decision that holds it.
	PolicyRevision string `json:"-"`
}

// PlanCounts counts the InstallPlans not yet Complete or Failed, and lists those awaiting
// approval.
type PlanCounts struct {
	Pending          int       `json:"pending"`
	AwaitingApproval int       `json:"awaitingApproval"`
	Awaiting         []PlanRef `json:"awaiting"`
}

// PlanRef is an InstallPlan and the CSVs it installs.
type PlanRef struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	CSVs      []string `json:"csvs"`
}

// PolicyInForce is the policy revision most gates were decided with, every revision the gates
// record, and the health of the policy ConfigMaps.
type PolicyInForce struct {
	Revision  string          `json:"revision"`
	Revisions []RevisionCount `json:"revisions"`
	Sources   []SourceHealth  `json:"sources"`
}

// RevisionCount is how many gates record a decision of one policy revision.
type RevisionCount struct {
	Revision string `json:"revision"`
	Gates    int    `json:"gates"`
	// LastEvaluatedAt is the newest status.decision.evaluatedAt among those gates.
	LastEvaluatedAt string `json:"lastEvaluatedAt"`

	last time.Time
}

// SourceHealth is a policy ConfigMap as the manager reported it in its status annotation.
type SourceHealth struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Status is ok or error as the manager reported it, unknown when it has not (yet).
	Status  string   `json:"status"`
	Serving string   `json:"serving"`
	Errors  []string `json:"errors"`
}

// Options say what a report covers.
type Options struct {
	// Namespace narrows the gates, Subscriptions and plans to one namespace ("" for all).
	Namespace string
	// PolicyNamespace is where the policy ConfigMaps are.
	PolicyNamespace string
	// Limit is how many of the longest holds to list.
	Limit int
	// Now is the report's clock.
	Now time.Time
	// Scope names what the reader covers, for a person ("all namespaces of the snapshot").
	Scope string
}

// Read builds the report from r.
func Read(ctx context.Context, r client.Reader, o Options) (*Report, error) {
	rep := &Report{Now: o.Now.Format(time.RFC3339), Scope: o.Scope}
	var gates tollgatev1alpha1.UpgradeGateList
	if err := listServed(ctx, r, &gates, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("list upgrade gates: %w", err)
	}
	var subs v1alpha1.SubscriptionList
	if err := listServed(ctx, r, &subs, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	rep.countGates(gates.Items, subs.Items, o.Limit)
	var plans v1alpha1.InstallPlanList
	if err := listServed(ctx, r, &plans, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("list install plans: %w", err)
	}
	rep.countPlans(plans.Items)
	cms, err := policysource.List(ctx, r, o.PolicyNamespace)
	if err != nil {
		return nil, err
	}
	rep.Policy.Sources = sourcesHealth(cms)
	rep.ExtensionGates, err = rep.readExtensionGates(ctx, r)
	sortBypasses(rep.Bypasses)
	return rep, err
}

// countGates counts the gates and the Subscriptions without one, finds the longest holds
// (at most limit) and ranks the policy revisions the gates record.
func (rep *Report) countGates(gates []tollgatev1alpha1.UpgradeGate, subs []v1alpha1.Subscription, limit int) {
	gated := map[client.ObjectKey]bool{}
	codes := map[string]int{}
	revisions := map[string]*RevisionCount{}
	rep.HeldLongest = []HeldGate{}
	for i := range gates {
		g := &gates[i]
		gated[client.ObjectKeyFromObject(g)] = true
		rep.Gates.Total++
		for _, b := range g.Status.Bypasses {
			rep.Bypasses = append(rep.Bypasses, bypassOf("UpgradeGate", g.Namespace, g.Name, b))
		}
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
	for i := range subs {
		if !gated[client.ObjectKeyFromObject(&subs[i])] {
			rep.SubscriptionsWithoutGate++
		}
	}
	rep.ByCode = []CodeCount{}
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		rep.ByCode = append(rep.ByCode, CodeCount{Code: c, Gates: codes[c]})
	}
	slices.SortStableFunc(rep.ByCode, func(a, b CodeCount) int { return b.Gates - a.Gates })
	slices.SortStableFunc(rep.HeldLongest, func(a, b HeldGate) int { return compareStart(a.Start, b.Start) })
	rep.HeldLongest = rep.HeldLongest[:min(max(limit, 0), len(rep.HeldLongest))]
	rep.Policy.Revisions, rep.Policy.Revision = rankRevisions(revisions)
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
func holdOf(g *tollgatev1alpha1.UpgradeGate) HeldGate {
	d := g.Status.Decision
	h := HeldGate{Namespace: g.Namespace, Name: g.Name, Code: d.BlockedBy, PolicyRevision: d.PolicyRevision}
	if c := meta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionUpgradeBlocked); c != nil && c.Status == "True" && !c.LastTransitionTime.IsZero() {
		h.Start, h.Message = c.LastTransitionTime.UTC(), c.Message
	} else if d.EvaluatedAt != nil {
		h.Start = d.EvaluatedAt.UTC()
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
	if !h.Start.IsZero() {
		h.Since = h.Start.Format(time.RFC3339)
	}
	return h
}

// compareStart orders the oldest hold first, and holds of unknown start last.
func compareStart(a, b time.Time) int {
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

func countRevision(revisions map[string]*RevisionCount, d tollgatev1alpha1.Decision) {
	if d.PolicyRevision == "" {
		return
	}
	rc := revisions[d.PolicyRevision]
	if rc == nil {
		rc = &RevisionCount{Revision: d.PolicyRevision}
		revisions[d.PolicyRevision] = rc
	}
	rc.Gates++
	if d.EvaluatedAt != nil && d.EvaluatedAt.After(rc.last) {
		rc.last = d.EvaluatedAt.UTC()
		rc.LastEvaluatedAt = rc.last.Format(time.RFC3339)
	}
}

// rankRevisions sorts the revisions by gates, then newest first; the first is the one in force.
func rankRevisions(revisions map[string]*RevisionCount) ([]RevisionCount, string) {
	out := []RevisionCount{}
	for _, rc := range revisions {
		out = append(out, *rc)
	}
	slices.SortFunc(out, func(a, b RevisionCount) int {
		return cmp.Or(b.Gates-a.Gates, b.last.Compare(a.last), strings.Compare(a.Revision, b.Revision))
	})
	if len(out) == 0 {
		return out, ""
	}
	return out, out[0].Revision
}

// countPlans counts the plans not yet Complete or Failed, and lists those awaiting approval
// (Manual, not approved, in RequiresApproval).
func (rep *Report) countPlans(plans []v1alpha1.InstallPlan) {
	rep.InstallPlans.Awaiting = []PlanRef{}
	for _, p := range plans {
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
			csvs := p.Spec.ClusterServiceVersionNames
			if csvs == nil {
				csvs = []string{}
			}
			rep.InstallPlans.Awaiting = append(rep.InstallPlans.Awaiting, PlanRef{Namespace: p.Namespace, Name: p.Name, CSVs: csvs})
		}
	}
}

// sourcesHealth reports each policy ConfigMap's health from the manager's status annotation.
func sourcesHealth(cms []corev1.ConfigMap) []SourceHealth {
	out := []SourceHealth{}
	for _, cm := range cms {
		h := SourceHealth{Name: cm.Name, Kind: cm.Labels[policysource.Label], Status: "unknown", Errors: []string{}}
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
		out = append(out, h)
	}
	return out
}
