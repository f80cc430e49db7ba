package statusreport

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
)

// ExtensionGate is one ExtensionGate as the manager recorded it: the pin, and what holds the
// highest successor.
type ExtensionGate struct {
	Name      string `json:"name"`
	Package   string `json:"package"`
	Installed string `json:"installed"`
	Pin       string `json:"pin"`
	// Next is the highest successor, "" when there is none.
	Next      string `json:"next"`
	BlockedBy string `json:"blockedBy"`
	// PinOwned is the PinOwned condition's reason (Moved, Held, Reclaimed...).
	PinOwned string `json:"pinOwned"`
}

// readExtensionGates lists the ExtensionGates, and adds their bypasses to the report's; a
// reader that does not know the kind (a cluster without OLM v1 gating) has none.
func (rep *Report) readExtensionGates(ctx context.Context, r client.Reader) ([]ExtensionGate, error) {
	var gates tollgatev1alpha1.ExtensionGateList
	if err := listServed(ctx, r, &gates); err != nil {
		return nil, fmt.Errorf("list extension gates: %w", err)
	}
	var out []ExtensionGate
	for _, g := range gates.Items {
		for _, b := range g.Status.Bypasses {
			rep.Bypasses = append(rep.Bypasses, bypassOf("ExtensionGate", "", g.Name, b))
		}
		x := ExtensionGate{Name: g.Name, Package: g.Status.Package, Installed: g.Status.Installed, Pin: g.Status.Pin, BlockedBy: g.Status.Decision.BlockedBy}
		if len(g.Status.Candidates) > 0 {
			x.Next = g.Status.Candidates[0].Version
		}
		if c := meta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionPinOwned); c != nil {
			x.PinOwned = c.Reason
		}
		out = append(out, x)
	}
	return out, nil
}

func renderExtensionGates(w io.Writer, rep *Report, o printers.TableOptions) error {
	if !o.Shows("extensions") || len(rep.ExtensionGates) == 0 {
		return nil
	}
	o.Title(w, "%sEXTENSION GATES (OLM v1)\n", o.Gap())
	t := o.NewTable(w, "NAME", "PACKAGE", "INSTALLED", "PIN", "NEXT", "BLOCKED-BY", "PIN-OWNED")
	for _, x := range rep.ExtensionGates {
		t.Row(x.Name, x.Package, x.Installed, x.Pin, x.Next, x.BlockedBy, x.PinOwned)
	}
	return t.Flush()
}

// listServed lists into list; a kind the API server does not serve (a cluster with one OLM
// only) has no objects.
func listServed(ctx context.Context, r client.Reader, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.List(ctx, list, opts...); err != nil && !meta.IsNoMatchError(err) {
		return err
	}
	return nil
}
