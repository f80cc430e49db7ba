package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// Outcomes of a replayed event.
const (
	OutcomeSame          = "same"
	OutcomeDifferent     = "DIFFERENT"
	OutcomeNotReplayable = "not replayable"
	// OutcomeInputEdited is an event whose input is not the one its input_digest was taken
	// of: its logged decision is not a decision on that input, so comparing them says nothing.
	OutcomeInputEdited = "INPUT EDITED"
)

// Policies are what a log is replayed with; *engine.Engine is one.
type Policies interface {
	approval.Evaluator
	Revision() string
}

// Report is the outcome of every event of a log; cmd/tollgate/README.md documents its JSON
// form.
type Report struct {
	PolicyRevision string  `json:"policyRevision"`
	Events         []Event `json:"events"`
	Same           int     `json:"same"`
	Different      int     `json:"different"`
	NotReplayable  int     `json:"notReplayable"`
	InputEdited    int     `json:"inputEdited"`
}

// Event is one logged event replayed: where it is in the log, its Subscription, and the
// decision logged beside the one replayed.
type Event struct {
	Line       int       `json:"line"`
	DecisionID string    `json:"decisionID"`
	Path       string    `json:"path"`
	Timestamp  string    `json:"timestamp"`
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason,omitempty"`
	Logged     *Decision `json:"logged,omitempty"`
	Replayed   *Decision `json:"replayed,omitempty"`
}

// Decision is a decision as replay compares it: allowed, and the standing denial codes.
type Decision struct {
	Allowed  bool     `json:"allowed"`
	Codes    []string `json:"codes"`
	Revision string   `json:"revision,omitempty"`
}

// String is "allowed", "held: " and the codes, or "-" for no decision.
func (d *Decision) String() string {
	if d == nil {
		return "-"
	}
	if d.Allowed {
		return "allowed"
	}
	return "held: " + strings.Join(d.Codes, ", ")
}

func (d *Decision) same(o *Decision) bool {
	return d.Allowed == o.Allowed && slices.Equal(d.Codes, o.Codes)
}

// Replay evaluates the input of every logged event with p and compares the decisions.
func Replay(ctx context.Context, p Policies, logged []decisionlog.Logged) *Report {
	report := &Report{PolicyRevision: p.Revision(), Events: []Event{}}
	for _, l := range logged {
		ev := replayOne(ctx, p, l)
		switch ev.Outcome {
		case OutcomeSame:
			report.Same++
		case OutcomeDifferent:
			report.Different++
		case OutcomeInputEdited:
			report.InputEdited++
		default:
			report.NotReplayable++
		}
		report.Events = append(report.Events, ev)
	}
	return report
}

// Differences says, one sentence each, what makes the replay differ from the log: decisions
// that come out differently, and inputs that were edited. It is empty when there is none.
func (r *Report) Differences() []string {
	var differences []string
	if r.Different > 0 {
		differences = append(differences, fmt.Sprintf("%d of %d logged decisions come out differently with these policies", r.Different, len(r.Events)))
	}
	if r.InputEdited > 0 {
		differences = append(differences, fmt.Sprintf("%d of %d logged inputs are not the ones their digests were taken of", r.InputEdited, len(r.Events)))
	}
	return differences
}

// replayOne evaluates one logged event's input and compares the decisions.
func replayOne(ctx context.Context, p Policies, l decisionlog.Logged) Event {
	ev := Event{Line: l.Line, DecisionID: l.Event.DecisionID, Path: l.Event.Path, Timestamp: l.Event.Timestamp.UTC().Format(time.RFC3339)}
	ev.Namespace, ev.Name = subscriptionOf(l.Event.Input)
	if l.Decision != nil {
		ev.Logged = &Decision{Allowed: l.Decision.Allowed, Codes: approval.Standing(*l.Decision), Revision: l.Event.Bundles[decisionlog.PolicyBundle].Revision}
	}
	if why := notReplayable(l, ev.Logged); why != "" {
		ev.Outcome, ev.Reason = OutcomeNotReplayable, why
		return ev
	}
	res := p.Evaluate(ctx, l.Event.Input)
	ev.Replayed = &Decision{Allowed: res.Decision.Allowed, Codes: approval.Standing(res.Decision), Revision: res.Revision}
	ev.Outcome = OutcomeSame
	if !ev.Logged.same(ev.Replayed) {
		ev.Outcome = OutcomeDifferent
	}
	if res.Err != nil {
		ev.Reason = res.Err.Error()
	}
	if edited := inputEdited(l.Event); edited != "" {
		ev.Outcome, ev.Reason = OutcomeInputEdited, edited
	}
	return ev
}

// notReplayable says why l cannot be replayed, or "" when it can.
func notReplayable(l decisionlog.Logged, logged *Decision) string {
	switch {
	case l.Event.Path == decisionlog.PathBypass:
		return "a bypass: a record of what someone else did, with no decision to replay"
	case l.Event.Path != decisionlog.PathDecision && l.Event.Path != decisionlog.PathApproval && l.Event.Path != decisionlog.PathPin:
		return "not a Tollgate decision (path " + l.Event.Path + ")"
	case l.Event.Input == nil:
		return "logged without input"
	case logged == nil:
		return "logged without result.decision"
	}
	return ""
}

// inputEdited says why ev's input is not the one it was logged with, or "" when it is: the
// logger writes the digests of the input it logs (engine.Digest, the state; and
// decisionlog.InputSHA256, all of it, clock and gate status included), so an input that
// does not have them, or an event without them, was edited after it was logged.
func inputEdited(ev decisionlog.Event) string {
	switch {
	case ev.InputDigest == "":
		return "no input_digest: Tollgate logs one with every input"
	case ev.InputSHA256 == "":
		return "no input_sha256: Tollgate logs one with every input"
	}
	if d := engine.Digest(ev.Input); d != ev.InputDigest {
		return fmt.Sprintf("digest mismatch: the input's digest is %s, input_digest says %s", d, ev.InputDigest)
	}
	if d := decisionlog.InputSHA256(ev.Input); d != ev.InputSHA256 {
		return fmt.Sprintf("digest mismatch: the input's clock (now) or gate status is not the one decided on: its sha256 is %s, input_sha256 says %s", d, ev.InputSHA256)
	}
	return ""
}

// subscriptionOf is input.subscription.metadata's namespace and name, or an extension
// document's input.extension.metadata.name.
func subscriptionOf(in map[string]any) (string, string) {
	sub, ok := in["subscription"].(map[string]any)
	if !ok {
		sub, _ = in["extension"].(map[string]any)
	}
	meta, _ := sub["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return ns, name
}
