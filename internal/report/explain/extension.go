package explain

import (
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// ExtensionReport is what explain knows of one OLM v1 ClusterExtension's pin: the successors
// OLM v1 would take, the decision on each, and why the highest is held.
type ExtensionReport struct {
	Name      string `json:"name"`
	Package   string `json:"package"`
	Installed string `json:"installed"`
	// Pin is spec.source.catalog.version now; Target the pin Tollgate would set.
	Pin    string `json:"pin"`
	Target string `json:"target"`
	Gated  bool   `json:"gated"`
	// Unexcludable says which denied bundles the pin admits that no exact pin can exclude (the
	// DeniedBundleAdmitted condition's message); "" for none.
	Unexcludable string `json:"unexcludable,omitempty"`
	// GateError says why the gate follows nothing, as the parser reports it; "" when it does.
	GateError      string                       `json:"gateError,omitempty"`
	Mode           string                       `json:"mode"`
	Now            string                       `json:"now"`
	PolicyRevision string                       `json:"policyRevision"`
	Candidates     []tollgatev1alpha1.Candidate `json:"candidates"`
	// Successor is the bundle the denials are about (the highest candidate), "" for none.
	Successor  string             `json:"successor"`
	Allowed    bool               `json:"allowed"`
	Denials    []Denial           `json:"denials"`
	Health     []engine.Condition `json:"health"`
	Conditions []engine.Condition `json:"conditions"`
	Notes      []engine.Note      `json:"notes,omitempty"`
}

// ExplainExtension decides the ClusterExtension name as the manager decides its gate (on what
// ev reads) and traces the decision on its highest successor.
func (x *Explainer) ExplainExtension(ctx context.Context, ev *evaluation.Evaluator, name string) (*ExtensionReport, error) {
	ext := &olmv1.ClusterExtension{}
	if err := ev.Decider.Reader.Get(ctx, client.ObjectKey{Name: name}, ext); err != nil {
		return nil, fmt.Errorf("read ClusterExtension %s: %w (list them with: kubectl get clusterextensions)", name, err)
	}
	gate, err := ev.GateOf(ctx, name)
	if err != nil {
		return nil, err
	}
	facts, out, err := ev.Outcome(ctx, ext, gate)
	if err != nil {
		return nil, err
	}
	ex, _ := x.Engine.Explain(ctx, out.Head.Input) // a policy error is a PolicyError denial
	x2 := ev.ExtensionRow(ext, gate, facts, out)
	rep := &ExtensionReport{
		Name: name, Package: x2.Package, Installed: out.Installed, Pin: x2.Pin, Target: out.Target,
		Gated: gate != nil, GateError: out.GateError, Unexcludable: x2.Unexcludable, Mode: x2.Mode, Now: ev.Now().UTC().Format(time.RFC3339), PolicyRevision: ex.Result.Revision,
		Candidates: orEmpty(x2.Status.Candidates), Allowed: ex.Result.Decision.Allowed, Denials: []Denial{},
		Health: orEmpty(ex.Result.Health), Conditions: orEmpty(ex.Result.Conditions), Notes: ex.Notes,
	}
	if c := out.Head.Candidate; c != nil {
		rep.Successor = c.Bundle.Name + " (" + c.Version + ", ClusterCatalog " + c.Catalog + ")"
	}
	for _, d := range ex.Denials {
		rep.Denials = append(rep.Denials, x.extensionDenial(gate, name, d))
	}
	return rep, nil
}

// extensionDenial renders a denial: an override remedy becomes the patch of the ExtensionGate.
func (x *Explainer) extensionDenial(gate *tollgatev1alpha1.ExtensionGate, name string, d engine.ExplainedDenial) Denial {
	var overrides []tollgatev1alpha1.Override
	if gate != nil {
		overrides = gate.Spec.Overrides
	}
	out := renderDenial(d.Denial, overrides, func(l engine.Remedy) Remedy {
		r := Remedy{Text: l.Text}
		switch {
		case l.Override != "" && plainName(name):
			r.Command = text.Command("kubectl", "patch", "extensiongate", name, "--type", "merge", "-p", overridesPatch(overrides, l.Override))
		case l.Command != "":
			r.Text, r.Command = policyCommand(l.Text, l.Command)
		}
		return r
	})
	out.Rule, out.Title, out.File, out.Row = d.Rule, d.Title, d.File, d.Row
	return out
}

// Printable is the report in every output format.
func (r *ExtensionReport) Printable() printers.Printable {
	return printers.Printable{
		Doc:   r,
		Human: func(w io.Writer, _ printers.TableOptions) error { return r.WriteText(w) },
		Names: printers.Refs(olmv1.ClusterExtensionGroupKind, []string{r.Name}, func(n string) string { return n }),
	}
}

// WriteText prints the report for a person.
func (r *ExtensionReport) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.line("ClusterExtension %s (package %s)", r.Name, r.Package)
	p.line("  installed %s, pinned at %q; Tollgate would pin %s (gated: %s, mode %s)", r.Installed, r.Pin, r.Target, yesNo(r.Gated), r.Mode)
	p.line("  decided at %s with policy revision %s", r.Now, r.PolicyRevision)
	if r.GateError != "" {
		p.line("  the gate follows nothing until it is fixed: %s", r.GateError)
	}
	p.blank()
	if len(r.Candidates) > 0 {
		t := printers.NewTable(w, "SUCCESSOR", "VERSION", "CATALOG", "ALLOWED", "BLOCKED-BY")
		for _, c := range r.Candidates {
			t.Row(c.Bundle, c.Version, c.Catalog, yesNo(c.Allowed), c.BlockedBy)
		}
		p.flush(t)
		p.blank()
	}
	switch {
	case r.Unexcludable != "" && len(r.Candidates) == 0:
		p.line("Not held, exposed: %s", r.Unexcludable)
	case r.Successor == "" && len(r.Denials) == 0:
		p.line("No successor within the gate's range and channels: nothing to decide.")
	case r.Successor == "":
		p.line("No successor can be judged:")
	case r.Allowed:
		p.line("The upgrade to %s is allowed.", r.Successor)
	default:
		p.line("The upgrade to %s is held:", r.Successor)
	}
	for i, d := range r.Denials {
		p.blank()
		p.denial(fmt.Sprintf("%d. ", i+1), d)
	}
	p.blank()
	p.line("Operands' health:")
	p.conditions(r.Health)
	return p.err
}
