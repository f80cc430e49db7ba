// Package explain answers "why is this upgrade held, and what would lift it?" for one
// Subscription: it decides the Subscription as the manager does (package approval), traces
// the evaluation for the rule behind each denial, and renders the result as text or JSON.
// The facts and remedies come from the policies; this package only renders them.
package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
)

// ErrNoSubscription is returned when the Subscription to explain does not exist.
var ErrNoSubscription = errors.New("subscription not found")

// Report is what explain knows about one Subscription's upgrade.
type Report struct {
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
	Denials        []Denial           `json:"denials"`
	InstallPlans   []approval.Verdict `json:"installPlans"`
	Health         []engine.Condition `json:"health"`
	Conditions     []engine.Condition `json:"conditions"`
	// Stored is the decision the manager last wrote into the UpgradeGate, when asked for.
	Stored *Stored `json:"stored,omitempty"`
	// PolicyMismatch says how explain's policy set differs from the one the manager runs, when
	// it does (see Explainer.Policy): Allowed and Denials are then explain's evaluation, not
	// necessarily the manager's decision, which is Stored.
	PolicyMismatch *PolicyMismatch `json:"policyMismatch,omitempty"`
	// Notices are things a person must know beyond the denials (Automatic approval, Audit mode).
	Notices []Remedy `json:"notices"`
	// Notes are the policies' print() and trace() notes and built-in errors.
	Notes []engine.Note `json:"notes,omitempty"`
}

// Denial is one denial with the rule behind it, what it rests on and what would lift it.
type Denial struct {
	Code           string   `json:"code"`
	Message        string   `json:"message"`
	Overridden     bool     `json:"overridden"`
	OverrideReason string   `json:"overrideReason,omitempty"`
	Rule           string   `json:"rule,omitempty"`
	Title          string   `json:"title,omitempty"`
	File           string   `json:"file,omitempty"`
	Row            int      `json:"row,omitempty"`
	Facts          []string `json:"facts"`
	Lift           []Remedy `json:"lift"`
}

// Remedy is one way to lift a denial: what must happen, the command that does it when there
// is one, and for a denial that another Subscription causes, that Subscription's own denials.
type Remedy struct {
	Text string `json:"text"`
	// Command is safe to paste into a POSIX shell: it runs exactly the words it shows, and it
	// is printable ASCII (see commands.go). A command a policy suggested that Tollgate cannot
	// check is left out, and Text says so.
	Command string `json:"command,omitempty"`
	// Held are the standing denials of the Subscription this remedy points at.
	Held []Denial `json:"held,omitempty"`
}

// Stored is the decision the manager last recorded in the UpgradeGate.
type Stored struct {
	Allowed        bool   `json:"allowed"`
	BlockedBy      string `json:"blockedBy,omitempty"`
	PolicyRevision string `json:"policyRevision,omitempty"`
	EvaluatedAt    string `json:"evaluatedAt,omitempty"`
	LastApproved   string `json:"lastApprovedInstallPlan,omitempty"`
}

// Explainer builds reports.
type Explainer struct {
	// Decider decides as the manager does; its Policies must be Engine.
	Decider *approval.Decider
	Engine  *engine.Engine
	// Self is how a person runs this program, for the commands it suggests: "tollgate" or
	// "kubectl tollgate".
	Self string
	// WithStored adds the decision the manager last stored in the gate.
	WithStored bool
	// Policy, when set, is compared with the policy set the manager runs (Report.PolicyMismatch).
	Policy *PolicyView
}

// Explain decides the Subscription key, traces the evaluation, and reports.
func (x *Explainer) Explain(ctx context.Context, key types.NamespacedName) (*Report, error) {
	dec, err := x.Decider.Decide(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read the state of Subscription %s: %w", key, err)
	}
	if dec == nil {
		return nil, fmt.Errorf("%w: no Subscription %s in namespace %s (list them with: kubectl get subscriptions -A)", ErrNoSubscription, key.Name, key.Namespace)
	}
	ex, _ := x.Engine.Explain(ctx, dec.Doc) // a policy error is a PolicyError denial in the result
	rep := x.summary(dec, ex)
	for _, d := range ex.Denials {
		rep.Denials = append(rep.Denials, x.denial(dec, d))
	}
	rep.Notices = x.notices(dec, ex.Result)
	if x.WithStored {
		rep.Stored, rep.Notices = x.stored(dec, ex.Result, rep.Notices)
	}
	rep.PolicyMismatch = x.mismatch(dec.Gate, ex.Result)
	return rep, nil
}

// summary is the report without denials and notices.
func (x *Explainer) summary(dec *approval.Decision, ex *engine.Explanation) *Report {
	res, sub := ex.Result, dec.Subscription
	rep := &Report{
		Namespace:      sub.Namespace,
		Name:           sub.Name,
		InstalledCSV:   sub.Status.InstalledCSV,
		CurrentCSV:     sub.Status.CurrentCSV,
		State:          res.State,
		UpToDate:       res.UpToDate,
		Approval:       string(approval.ApprovalOf(sub)),
		Mode:           string(x.Decider.Mode(dec.Gate)),
		Now:            fmt.Sprint(dec.Doc["now"]),
		PolicyRevision: res.Revision,
		Allowed:        res.Decision.Allowed,
		Denials:        []Denial{},
		InstallPlans:   orEmpty(dec.Plans),
		Health:         orEmpty(res.Health),
		Conditions:     orEmpty(res.Conditions),
		Notes:          ex.Notes,
	}
	if sub.Spec != nil {
		rep.Package, rep.Channel = sub.Spec.Package, sub.Spec.Channel
		if sub.Spec.CatalogSource != "" {
			rep.SourceCatalog = orDefault(sub.Spec.CatalogSourceNamespace, sub.Namespace) + "/" + sub.Spec.CatalogSource
		}
	}
	if dec.InstalledCSV != nil {
		rep.InstalledPhase = string(dec.InstalledCSV.Status.Phase)
	}
	return rep
}

// notices are what a person must know beyond the denials.
func (x *Explainer) notices(dec *approval.Decision, res *engine.Result) []Remedy {
	sub := dec.Subscription
	notices := []Remedy{}
	if approval.ApprovalOf(sub) != "Manual" {
		notices = append(notices, Remedy{
			Text: fmt.Sprintf("installPlanApproval is %s: OLM approves this operator's InstallPlans itself, so Tollgate cannot hold them and only reports its decision. "+
				"To let Tollgate gate upgrades, switch it to Manual (or run the manager with --take-over-approval):", approval.ApprovalOf(sub)),
			Command: kubectl("patch", "subscription", sub.Namespace, sub.Name, "--type", "merge", "-p", `{"spec":{"installPlanApproval":"Manual"}}`)})
	}
	if x.Decider.Mode(dec.Gate) == tollgatev1alpha1.ModeAudit {
		notices = append(notices, Remedy{Text: "The gate is in Audit mode: Tollgate decides and reports but never approves. To let it approve:",
			Command: kubectl("patch", "upgradegate", sub.Namespace, sub.Name, "--type", "merge", "-p", `{"spec":{"mode":"Enforce"}}`)})
	}
	if res.Decision.Truncated > 0 {
		notices = append(notices, Remedy{Text: fmt.Sprintf("%d more denial(s) were left out (at most %d are kept).", res.Decision.Truncated, engine.MaxDenials)})
	}
	return notices
}

// stored is the manager's last recorded decision, and a notice when it differs in policy.
func (x *Explainer) stored(dec *approval.Decision, res *engine.Result, notices []Remedy) (*Stored, []Remedy) {
	sub := dec.Subscription
	if dec.Gate == nil {
		return nil, append(notices, Remedy{Text: fmt.Sprintf("There is no UpgradeGate %s/%s yet: is the Tollgate manager running?", sub.Namespace, sub.Name), Command: "kubectl get upgradegates -A"})
	}
	d := dec.Gate.Status.Decision
	if d.EvaluatedAt == nil {
		return nil, notices
	}
	s := &Stored{Allowed: d.Allowed, BlockedBy: d.BlockedBy, PolicyRevision: d.PolicyRevision,
		EvaluatedAt: d.EvaluatedAt.UTC().Format(time.RFC3339), LastApproved: d.LastApprovedInstallPlan}
	if d.PolicyRevision != "" && d.PolicyRevision != res.Revision && x.Policy == nil { // else PolicyMismatch says it
		notices = append(notices, Remedy{Text: fmt.Sprintf("The manager decided with policy revision %s, this explanation uses %s: the policies differ (a ConfigMap changed, or bundles or flags such as --policy-dir differ).", d.PolicyRevision, res.Revision)})
	}
	return s, notices
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
