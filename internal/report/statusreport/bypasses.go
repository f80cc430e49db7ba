package statusreport

import (
	"cmp"
	"io"
	"slices"
	"time"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Bypass is a bypass a gate recorded in its status (status.bypasses): an InstallPlan approved,
// or a ClusterExtension's pin moved, by someone else than Tollgate; with its gate, and the line
// the table prints.
type Bypass struct {
	// GateKind is UpgradeGate or ExtensionGate; Namespace (an UpgradeGate's) and Gate name it.
	GateKind  string `json:"gateKind"`
	Namespace string `json:"namespace,omitempty"`
	Gate      string `json:"gate"`
	tollgatev1alpha1.Bypass
	// Line is bypass.Summary of it.
	Line string `json:"line"`
}

// bypassOf is b, which the gate kind ns/name recorded.
func bypassOf(kind, ns, name string, b tollgatev1alpha1.Bypass) Bypass {
	gate := name
	if ns != "" {
		gate = ns + "/" + name
	}
	return Bypass{GateKind: kind, Namespace: ns, Gate: name, Bypass: b, Line: bypass.Summary(b, ns, gate)}
}

// sortBypasses orders the newest first: by when the field was set (when Tollgate saw it, if
// the object did not say), then by gate.
func sortBypasses(bs []Bypass) {
	when := func(b Bypass) time.Time {
		if b.At != nil {
			return b.At.Time
		}
		return b.SeenAt.Time
	}
	slices.SortStableFunc(bs, func(a, b Bypass) int {
		return cmp.Or(when(b).Compare(when(a)), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Gate, b.Gate))
	})
}

func renderBypasses(w io.Writer, rep *Report, o printers.TableOptions) error {
	if !o.Shows("bypasses") || len(rep.Bypasses) == 0 {
		return nil
	}
	o.Title(w, "%sBYPASSED (%d, newest first): changes only Tollgate is meant to make, made by someone else\n", o.Gap(), len(rep.Bypasses))
	indent := "  "
	if o.NoHeaders {
		indent = ""
	}
	for _, b := range rep.Bypasses {
		if _, err := io.WriteString(w, indent+"bypassed: "+text.Escape(b.Line)+"\n"); err != nil {
			return err
		}
	}
	return nil
}
