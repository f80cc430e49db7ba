package evaluation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Extension is one OLM v1 ClusterExtension's pin decision and the ExtensionGate status that
// records it.
type Extension struct {
	Name      string `json:"name"`
	Package   string `json:"package"`
	Installed string `json:"installed"`
	// Pin is spec.source.catalog.version as it is; Target the pin Tollgate would set.
	Pin    string `json:"pin"`
	Target string `json:"target"`
	// Gated says whether an ExtensionGate gates it (Tollgate moves only gated pins).
	Gated bool   `json:"gated"`
	Mode  string `json:"mode"`
	// GateError says why the gate follows nothing (its range or channels, or the extension's
	// selector, as the parser reports them); "" when it follows its successors.
	GateError string `json:"gateError,omitempty"`
	// Unexcludable says which denied bundles the pin admits that no exact pin can exclude
	// (the DeniedBundleAdmitted condition's message); "" for none.
	Unexcludable string             `json:"unexcludable,omitempty"`
	Decision     Decision           `json:"decision"`
	Conditions   []engine.Condition `json:"conditions"`
	Health       []engine.Condition `json:"health"`
	// Status is the ExtensionGate status the manager would write (its PinOwned condition
	// aside, which depends on the pin's history).
	Status tollgatev1alpha1.ExtensionGateStatus `json:"status"`
}

// Outcome decides the pin of the ClusterExtension name, with its gate (nil when none), on what
// the Evaluator's reader reads; catalog content comes from e.Content, else from the reader when
// it carries some (a snapshot), and is otherwise unread, which holds.
func (e *Evaluator) Outcome(ctx context.Context, ext *olmv1.ClusterExtension, gate *tollgatev1alpha1.ExtensionGate) (pin.Gathered, pin.Outcome, error) {
	content := e.Content
	if content == nil {
		content, _ = e.Decider.Reader.(pin.Content)
	}
	if content == nil {
		content = unread{}
	}
	g := pin.Gatherer{Reader: e.Decider.Reader, Operands: e.Decider.Reader, Content: content, Config: e.Decider.Input, Now: e.now}
	facts, err := g.Gather(ctx, gate, ext)
	if err != nil {
		return facts, pin.Outcome{}, err
	}
	return facts, pin.Decide(ctx, facts.Facts, e.Engine), nil
}

type unread struct{}

func (unread) Catalog(context.Context, catalogd.Source) (*fbc.Catalog, error) {
	return nil, errors.New("catalog content is read from a snapshot that carries it (tollgate snapshot), not from here")
}

// Extensions decides every ClusterExtension; a reader that does not know the kind (a cluster
// without OLM v1) has none.
func (e *Evaluator) Extensions(ctx context.Context) ([]Extension, error) {
	var list olmv1.ClusterExtensionList
	if err := e.Decider.Reader.List(ctx, &list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list cluster extensions: %w", err)
	}
	var out []Extension
	for i := range list.Items {
		x, err := e.extension(ctx, &list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func (e *Evaluator) extension(ctx context.Context, ext *olmv1.ClusterExtension) (Extension, error) {
	gate, err := e.GateOf(ctx, ext.Name)
	if err != nil {
		return Extension{}, err
	}
	facts, out, err := e.Outcome(ctx, ext, gate)
	if err != nil {
		return Extension{}, fmt.Errorf("decide ClusterExtension %s: %w", ext.Name, err)
	}
	return e.ExtensionRow(ext, gate, facts, out), nil
}

// GateOf is the ExtensionGate name, or nil when there is none.
func (e *Evaluator) GateOf(ctx context.Context, name string) (*tollgatev1alpha1.ExtensionGate, error) {
	gate := &tollgatev1alpha1.ExtensionGate{}
	if err := e.Decider.Reader.Get(ctx, client.ObjectKey{Name: name}, gate); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return gate, nil
}

// ExtensionRow is the report of one ClusterExtension's outcome, with the ExtensionGate status
// the manager would write.
func (e *Evaluator) ExtensionRow(ext *olmv1.ClusterExtension, gate *tollgatev1alpha1.ExtensionGate, facts pin.Gathered, out pin.Outcome) Extension {
	res := out.Head.Result
	x := Extension{
		Name: ext.Name, Installed: out.Installed, Target: out.Target, Gated: gate != nil, GateError: out.GateError,
		Mode:       string(e.extensionMode(gate)),
		Decision:   Decision{Allowed: res.Decision.Allowed, Denials: orEmpty(gatestatus.Denials(res.Decision))},
		Conditions: orEmpty(res.Conditions), Health: orEmpty(res.Health),
	}
	if src := ext.Spec.Source.Catalog; src != nil {
		x.Package, x.Pin = src.PackageName, src.Version
	}
	old := tollgatev1alpha1.ExtensionGateStatus{}
	if gate != nil {
		old = gate.Status
	}
	x.Status, _ = gatestatus.NextExtension(old, gatestatus.ExtensionObservation{
		Package: x.Package, Outcome: out, Pin: x.Pin, Catalogs: facts.Digests, Now: metav1.NewTime(e.now.Truncate(time.Second)),
	})
	if c := meta.FindStatusCondition(x.Status.Conditions, tollgatev1alpha1.ConditionDeniedBundleAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		x.Unexcludable = c.Message
	}
	return x
}

// Now is the instant the Evaluator decides at.
func (e *Evaluator) Now() time.Time { return e.now }

func (e *Evaluator) extensionMode(gate *tollgatev1alpha1.ExtensionGate) tollgatev1alpha1.Mode {
	def := e.Decider.Input.WithDefaults().DefaultMode
	if gate == nil {
		return def
	}
	return gate.Spec.Mode.Or(def)
}

// renderExtensionReport prints the ClusterExtensions table and, under it, the denials on each
// one's highest successor.
func renderExtensionReport(w io.Writer, xs []Extension, o printers.TableOptions, gap string) error {
	if err := renderExtensions(w, xs, o, gap); err != nil {
		return err
	}
	if o.NoHeaders {
		return nil
	}
	for _, x := range xs {
		if x.GateError != "" {
			fmt.Fprintf(w, "\n%s follows nothing: %s\n", text.Escape(x.Name), text.Wrap(x.GateError, 96, "  "))
		}
		if x.Unexcludable != "" {
			fmt.Fprintf(w, "\n%s is not held, but exposed: %s\n", text.Escape(x.Name), text.Wrap(x.Unexcludable, 96, "  "))
		}
	}
	subjects := make([]Subscription, 0, len(xs))
	for _, x := range xs {
		subjects = append(subjects, Subscription{Name: x.Name, Decision: x.Decision})
	}
	renderDenials(w, subjects)
	return nil
}

// renderExtensions prints the ClusterExtensions table, its title after gap.
func renderExtensions(w io.Writer, xs []Extension, o printers.TableOptions, gap string) error {
	o.Title(w, gap+"CLUSTER EXTENSIONS (%d)\n", len(xs))
	if len(xs) == 0 {
		return nil
	}
	t := o.NewTable(w, "NAME", "PACKAGE", "INSTALLED", "PIN", "TARGET", "GATED", "MODE", "NEXT")
	for _, x := range xs {
		t.Row(x.Name, x.Package, x.Installed, x.Pin, x.Target, yesNo(x.Gated), x.Mode, nextWord(x))
	}
	return t.Flush()
}

// nextWord is the NEXT column: what becomes of the highest successor.
func nextWord(x Extension) string {
	if len(x.Status.Candidates) == 0 {
		return "none"
	}
	top := x.Status.Candidates[0]
	if x.Decision.Allowed {
		return top.Version + " allowed"
	}
	return top.Version + " " + strings.TrimPrefix(verdictWord(x.Decision), "held: ") + " holds"
}
