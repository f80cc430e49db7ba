package explain

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"time"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// denial renders one denial: its rule, the policies' facts, and their remedies with the
// commands that apply them.
func (x *Explainer) denial(dec *approval.Decision, d engine.ExplainedDenial) Denial {
	out := x.plain(dec, d.Denial)
	out.Rule, out.Title, out.File, out.Row = d.Rule, d.Title, d.File, d.Row
	return out
}

// plain renders a denial without its rule.
func (x *Explainer) plain(dec *approval.Decision, d engine.Denial) Denial {
	var overrides []tollgatev1alpha1.Override
	if dec.Gate != nil {
		overrides = dec.Gate.Spec.Overrides
	}
	return renderDenial(d, overrides, func(l engine.Remedy) Remedy { return x.remedy(dec, l) })
}

// renderDenial is a denial without its rule, waived by its gate's overrides when it says so, each
// remedy rendered by remedy.
func renderDenial(d engine.Denial, overrides []tollgatev1alpha1.Override, remedy func(engine.Remedy) Remedy) Denial {
	out := Denial{Code: d.Code, Message: d.Message, Overridden: d.Overridden, Facts: orEmpty(d.Facts), Lift: []Remedy{}}
	if d.Overridden {
		if o := override(overrides, d.Code); o != nil {
			out.OverrideReason = o.Reason
		}
	}
	for _, l := range d.Lift {
		out.Lift = append(out.Lift, remedy(l))
	}
	return out
}

// remedy renders one of the policies' remedies: an override becomes the kubectl patch that
// adds it; a Subscription becomes the command that explains it, with its standing denials; a
// command of the policies' own is checked (policyCommand). Every command is safe to paste:
// each argument that is not a plain word is quoted for the shell.
func (x *Explainer) remedy(dec *approval.Decision, l engine.Remedy) Remedy {
	r := Remedy{Text: l.Text}
	switch {
	case l.Override != "":
		r.Command = overridePatch(dec, l.Override)
	case l.Subscription != nil:
		r.Held = x.peerDenials(dec, *l.Subscription)
		// The key comes from the policies: name it in a command only when it is a name
		// Kubernetes would accept, so it cannot turn into an option of the command.
		if plainName(l.Subscription.Namespace) && plainName(l.Subscription.Name) {
			r.Command = x.Self + " " + text.Command("explain", "-n", l.Subscription.Namespace, l.Subscription.Name)
		}
	case l.Command != "":
		r.Text, r.Command = policyCommand(l.Text, l.Command)
	}
	return r
}

// peerDenials are the standing denials of a peer Subscription, from its own decision.
func (x *Explainer) peerDenials(dec *approval.Decision, key engine.ObjectKey) []Denial {
	for _, p := range dec.Peers {
		if p.Subscription == nil || p.Subscription.Namespace != key.Namespace || p.Subscription.Name != key.Name {
			continue
		}
		// The peer's remedies name its own gate: render them against its decision.
		peer := &approval.Decision{Document: p.Document, Result: p.Result}
		var held []Denial
		for _, d := range p.Result.Decision.Denials {
			if !d.Overridden {
				held = append(held, x.plain(peer, d))
			}
		}
		return held
	}
	return nil
}

func override(overrides []tollgatev1alpha1.Override, code string) *tollgatev1alpha1.Override {
	for i := range overrides {
		if overrides[i].Code == code {
			return &overrides[i]
		}
	}
	return nil
}

// overridePatch is the kubectl patch that adds an override of code to the Subscription's
// gate, or "" when the Subscription's namespace or name is no plain name (a snapshot may hold
// anything). A merge patch replaces the whole list, so the gate's other overrides are carried
// along, with their admin-written reasons: the patch is one shell-quoted argument, and its
// JSON is printable ASCII (asciiJSON), so what a person sees is exactly what a paste runs.
func overridePatch(dec *approval.Decision, code string) string {
	sub := dec.Subscription
	if !plainName(sub.Namespace) || !plainName(sub.Name) {
		return ""
	}
	var overrides []tollgatev1alpha1.Override
	if dec.Gate != nil {
		overrides = dec.Gate.Spec.Overrides
	}
	return kubectl("patch", "upgradegate", sub.Namespace, sub.Name, "--type", "merge", "-p", overridesPatch(overrides, code))
}

// overridesPatch is the merge patch that sets a gate's overrides to overrides plus one of code
// (replacing an expired one), with a placeholder reason.
func overridesPatch(overrides []tollgatev1alpha1.Override, code string) string {
	type entry struct {
		Code    string `json:"code"`
		Reason  string `json:"reason"`
		Expires string `json:"expires,omitempty"`
	}
	var list []entry
	for _, o := range overrides {
		if o.Code == code {
			continue // an expired override of this code is replaced
		}
		e := entry{Code: o.Code, Reason: o.Reason}
		if o.Expires != nil {
			e.Expires = o.Expires.UTC().Format(time.RFC3339)
		}
		list = append(list, e)
	}
	list = append(list, entry{Code: code, Reason: "<why this upgrade is safe anyway>"})
	sort.SliceStable(list, func(i, j int) bool { return list[i].Code < list[j].Code })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep the placeholder readable: < and > are harmless in quotes
	_ = enc.Encode(map[string]any{"spec": map[string]any{"overrides": list}})
	return asciiJSON(strings.TrimSuffix(buf.String(), "\n"))
}
