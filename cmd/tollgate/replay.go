package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approval"
	"github.com/tollgate-dev/tollgate/decisionlog"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policyset"
	"github.com/tollgate-dev/tollgate/printers"
)

// Outcomes of a replayed event.
const (
	replaySame          = "same"
	replayDifferent     = "DIFFERENT"
	replayNotReplayable = "not replayable"
	// replayInputEdited is an event whose input is not the one its input_digest was taken of:
	// its logged decision is not a decision on that input, so comparing them says nothing.
	replayInputEdited = "INPUT EDITED"
)

// replayReport is the output of `tollgate eval --replay`; cmd/tollgate/README.md documents it.
type replayReport struct {
	PolicyRevision string        `json:"policyRevision"`
	Events         []replayEvent `json:"events"`
	Same           int           `json:"same"`
	Different      int           `json:"different"`
	NotReplayable  int           `json:"notReplayable"`
	InputEdited    int           `json:"inputEdited"`
}

type replayEvent struct {
	Line       int             `json:"line"`
	DecisionID string          `json:"decisionID"`
	Path       string          `json:"path"`
	Timestamp  string          `json:"timestamp"`
	Namespace  string          `json:"namespace"`
	Name       string          `json:"name"`
	Outcome    string          `json:"outcome"`
	Reason     string          `json:"reason,omitempty"`
	Logged     *replayDecision `json:"logged,omitempty"`
	Replayed   *replayDecision `json:"replayed,omitempty"`
}

// replayDecision is a decision as replay compares it: allowed, and the standing denial codes.
type replayDecision struct {
	Allowed  bool     `json:"allowed"`
	Codes    []string `json:"codes"`
	Revision string   `json:"revision,omitempty"`
}

func (d *replayDecision) String() string {
	if d == nil {
		return "-"
	}
	if d.Allowed {
		return "allowed"
	}
	return "held: " + strings.Join(d.Codes, ", ")
}

func (d *replayDecision) same(o *replayDecision) bool {
	return d.Allowed == o.Allowed && slices.Equal(d.Codes, o.Codes)
}

// runReplay re-evaluates the decisions of a decision log with the policies of the flags.
func runReplay(ctx context.Context, stdout io.Writer, f evalFlags) error {
	if err := f.output.validate(); err != nil {
		return err
	}
	if f.output.effective() == "name" {
		return errNoNames
	}
	if len(f.snapshot) > 0 {
		return errors.New("--replay re-evaluates logged inputs: it takes no --snapshot")
	}
	logged, err := readDecisionLog(f.replay)
	if err != nil {
		return err
	}
	eng, err := replayEngine(ctx, f.policy)
	if err != nil {
		return err
	}
	report := &replayReport{PolicyRevision: eng.Revision(), Events: []replayEvent{}}
	for _, l := range logged {
		ev := replayOne(ctx, eng, l)
		switch ev.Outcome {
		case replaySame:
			report.Same++
		case replayDifferent:
			report.Different++
		case replayInputEdited:
			report.InputEdited++
		default:
			report.NotReplayable++
		}
		report.Events = append(report.Events, ev)
	}
	human := func(w io.Writer, o printers.TableOptions) error { return renderReplayTable(w, report, o) }
	if err := f.output.print(stdout, printable{doc: report, human: human}); err != nil {
		return err
	}
	var differences []string
	if report.Different > 0 {
		differences = append(differences, fmt.Sprintf("%d of %d logged decisions come out differently with these policies", report.Different, len(report.Events)))
	}
	if report.InputEdited > 0 {
		differences = append(differences, fmt.Sprintf("%d of %d logged inputs are not the ones their input_digest was taken of", report.InputEdited, len(report.Events)))
	}
	if len(differences) > 0 {
		return &exitError{code: exitDenied, err: errors.New(strings.Join(differences, "; "))}
	}
	return nil
}

func readDecisionLog(path string) ([]decisionlog.Logged, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--replay: %w", err)
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	logged, err := decisionlog.Read(r)
	if err != nil {
		return nil, fmt.Errorf("--replay %s: %w", path, err)
	}
	return logged, nil
}

// replayEngine is the embedded policies with --bundle and --policy-dir: without a cluster,
// the policy ConfigMaps are not read.
func replayEngine(ctx context.Context, pf policyFlags) (*engine.Engine, error) {
	base, local, err := pf.sources().Base(ctx)
	if err != nil {
		return nil, err
	}
	base.Modules = append(slices.Clone(base.Modules), local...)
	return policyset.Compile(ctx, base)
}

// replayOne evaluates one logged event's input and compares the decisions.
func replayOne(ctx context.Context, eng *engine.Engine, l decisionlog.Logged) replayEvent {
	ev := replayEvent{Line: l.Line, DecisionID: l.Event.DecisionID, Path: l.Event.Path, Timestamp: l.Event.Timestamp.UTC().Format(time.RFC3339)}
	ev.Namespace, ev.Name = subscriptionOf(l.Event.Input)
	if l.Decision != nil {
		ev.Logged = &replayDecision{Allowed: l.Decision.Allowed, Codes: approval.Standing(*l.Decision), Revision: l.Event.Bundles[decisionlog.PolicyBundle].Revision}
	}
	switch {
	case l.Event.Path != decisionlog.PathDecision && l.Event.Path != decisionlog.PathApproval:
		ev.Outcome, ev.Reason = replayNotReplayable, "not a Tollgate decision (path "+l.Event.Path+")"
		return ev
	case l.Event.Input == nil:
		ev.Outcome, ev.Reason = replayNotReplayable, "logged without input"
		return ev
	case ev.Logged == nil:
		ev.Outcome, ev.Reason = replayNotReplayable, "logged without result.decision"
		return ev
	}
	res := eng.Evaluate(ctx, l.Event.Input)
	ev.Replayed = &replayDecision{Allowed: res.Decision.Allowed, Codes: approval.Standing(res.Decision), Revision: res.Revision}
	ev.Outcome = replaySame
	if !ev.Logged.same(ev.Replayed) {
		ev.Outcome = replayDifferent
	}
	if res.Err != nil {
		ev.Reason = res.Err.Error()
	}
	if edited := inputEdited(l.Event); edited != "" {
		ev.Outcome, ev.Reason = replayInputEdited, edited
	}
	return ev
}

// inputEdited says why ev's input is not the one it was logged with, or "" when it is: the
// logger writes the digest of the input it logs (engine.Digest), so an input that does not
// have it, or an event without one, was edited after it was logged. The digest leaves out
// input.now, so an edited clock is not seen.
func inputEdited(ev decisionlog.Event) string {
	if ev.InputDigest == "" {
		return "no input_digest: Tollgate logs one with every input"
	}
	if d := engine.Digest(ev.Input); d != ev.InputDigest {
		return fmt.Sprintf("digest mismatch: the input's digest is %s, input_digest says %s", d, ev.InputDigest)
	}
	return ""
}

// subscriptionOf is input.subscription.metadata's namespace and name.
func subscriptionOf(in map[string]any) (string, string) {
	sub, _ := in["subscription"].(map[string]any)
	meta, _ := sub["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return ns, name
}

func renderReplayTable(w io.Writer, r *replayReport, o printers.TableOptions) error {
	// A decision log is input like any other: its names and reasons are escaped as printed.
	t := o.NewTable(w, "DECISION ID", "PATH", "SUBSCRIPTION", "LOGGED", "REPLAYED", "OUTCOME")
	for _, e := range r.Events {
		outcome := e.Outcome
		switch {
		case e.Reason != "" && e.Outcome == replayNotReplayable:
			outcome += " (" + e.Reason + ")"
		case e.Outcome == replayInputEdited:
			what, _, _ := strings.Cut(e.Reason, ":") // the digests are in -o json
			outcome += " (" + what + ")"
		}
		t.Row(e.DecisionID, e.Path, e.Namespace+"/"+e.Name, e.Logged.String(), e.Replayed.String(), outcome)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	edited := ""
	if r.InputEdited > 0 { // said only when there are any: the line is unchanged otherwise
		edited = fmt.Sprintf(", %d input edited", r.InputEdited)
	}
	o.Title(w, "\n%d events replayed with policy revision %s: %d same, %d different, %d not replayable%s\n",
		len(r.Events), printers.Escape(r.PolicyRevision), r.Same, r.Different, r.NotReplayable, edited)
	return nil
}
