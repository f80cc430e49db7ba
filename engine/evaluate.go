package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/print"

	"github.com/tollgate-dev/tollgate/policies"
)

// Evaluate runs the prepared query on one input document (policies/README.md, version 1).
// It never returns nil and never panics: a policy error, an undefined or malformed result, or
// a missed deadline yields a Result with Allowed=false, one PolicyError denial saying what
// went wrong, and Err set. Safe for concurrent use.
func (e *Engine) Evaluate(ctx context.Context, input map[string]any) *Result {
	return e.evaluate(ctx, input)
}

func (e *Engine) evaluate(ctx context.Context, input map[string]any, opts ...rego.EvalOption) (res *Result) {
	defer func() {
		if p := recover(); p != nil {
			res = policyError(e.revision, fmt.Errorf("%w: panic: %v", ErrEvaluation, p))
		}
	}()
	if r := tooLarge(e.revision, input); r != nil {
		return r
	}
	if r := misshapen(e.revision, input); r != nil {
		return r
	}
	// A document of an older manager has no move: judge the one it describes.
	value, err := inputValue(policies.WithMove(input))
	if err != nil {
		return policyError(e.revision, fmt.Errorf("%w: %w", ErrInput, err))
	}
	if err := ctx.Err(); err != nil {
		return policyError(e.revision, fmt.Errorf("%w: %w", ErrDeadline, err))
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var builtinErrs []topdown.Error
	opts = append(opts, rego.EvalParsedInput(value), rego.EvalBuiltinErrorList(&builtinErrs), rego.EvalGenerateJSON(boundedJSON))
	rs, err := e.prepared.Eval(ctx, opts...)
	switch {
	case errors.Is(err, ErrResultShape):
		return policyError(e.revision, err)
	case err != nil && (ctx.Err() != nil || topdown.IsCancel(err)):
		return policyError(e.revision, fmt.Errorf("%w (%s): %w", ErrDeadline, e.timeout, err))
	case err != nil:
		return policyError(e.revision, fmt.Errorf("%w: %w", ErrEvaluation, err))
	case len(rs) == 0 || len(rs[0].Expressions) == 0:
		return policyError(e.revision, fmt.Errorf("%w: %s has no value for this input", ErrUndefined, Query))
	case len(rs) > 1:
		return policyError(e.revision, fmt.Errorf("%w: %s has %d values, want one", ErrResultShape, Query, len(rs)))
	}
	w, err := decodeResult(rs[0].Expressions[0].Value)
	if err != nil {
		return policyError(e.revision, err)
	}
	r := e.finishDecision(w)
	for _, be := range builtinErrs {
		r.Warnings = append(r.Warnings, be.Error())
	}
	r.Revision = e.revision
	recheck, warning := recheckAt(w.RecheckAt, input["now"])
	// A built-in error makes its expression undefined, which may have dropped a denial: an
	// approval must come from an evaluation without any.
	if r.Decision.Allowed && len(r.Warnings) > 0 {
		more := ""
		if n := len(r.Warnings) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more)", n)
		}
		fallback := policyError(e.revision, fmt.Errorf("%w: a built-in function failed, so a denial may be missing: %s%s", ErrEvaluation, r.Warnings[0], more))
		fallback.Warnings = r.Warnings
		r = fallback
	}
	// After the check above: recheckAt only says when to look again, so a malformed one never
	// changes the decision.
	r.RecheckAt = recheck
	if warning != "" {
		r.Warnings = append(r.Warnings, warning)
	}
	return r
}

// Digest identifies an input document regardless of when it was evaluated: the sha256 (hex)
// of its canonical JSON (sorted keys) without the top-level "now" and without what Tollgate
// itself writes: of the gate only its identity, generation and spec count, so writing a
// decision into gate.status does not make the next evaluation look like a new input. Equal
// state, equal digest.
func Digest(input map[string]any) string {
	without := make(map[string]any, len(input))
	for k, v := range input {
		switch k {
		case "now":
		case "gate":
			without[k] = gateIdentity(v)
		default:
			without[k] = v
		}
	}
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(without); err != nil {
		// Not JSON data: such an input also fails evaluation; give it a digest of its own.
		fmt.Fprintf(h, "unencodable: %v", err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func gateIdentity(v any) any {
	gate, ok := v.(map[string]any)
	if !ok {
		return v
	}
	md, _ := gate["metadata"].(map[string]any)
	return map[string]any{
		"metadata": map[string]any{"namespace": md["namespace"], "name": md["name"], "uid": md["uid"], "generation": md["generation"]},
		"spec":     gate["spec"],
	}
}

// ruleSource is a rule that can deny: where it is, its package and its METADATA.
type ruleSource struct {
	File        string
	Row         int
	Package     string // "tollgate.upgrade"
	Rule        string // "deny"
	Title       string
	Description string
}

// String is the Denial.Source form: "upgrade/upgrade.rego:42 (deny: <title>)".
func (s ruleSource) String() string {
	if s.File == "" {
		return ""
	}
	if s.Title == "" {
		return fmt.Sprintf("%s:%d (%s)", s.File, s.Row, s.Rule)
	}
	return fmt.Sprintf("%s:%d (%s: %s)", s.File, s.Row, s.Rule, s.Title)
}

// ruleIndex maps a denial code to the rules whose METADATA carries it as custom.code, sorted
// by file and row.
type ruleIndex map[string][]ruleSource

func ruleSources(c *ast.Compiler) ruleIndex {
	out := ruleIndex{}
	as := c.GetAnnotationSet()
	if as == nil {
		return out
	}
	for _, ar := range as.Flatten() {
		rule := ar.GetRule()
		if rule == nil || ar.Annotations == nil {
			continue
		}
		code, ok := ar.Annotations.Custom["code"].(string)
		if !ok || code == "" {
			continue
		}
		src := ruleSource{
			Package:     strings.TrimPrefix(rule.Module.Package.Path.String(), "data."),
			Rule:        rule.Head.Ref().String(),
			Title:       ar.Annotations.Title,
			Description: ar.Annotations.Description,
		}
		if rule.Location != nil {
			src.File, src.Row = rule.Location.File, rule.Location.Row
		}
		out[code] = append(out[code], src)
	}
	for _, rules := range out {
		slices.SortFunc(rules, func(a, b ruleSource) int {
			return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Row, b.Row))
		})
	}
	return out
}

// lookup picks the rule behind a denial: among the rules with its code, the one with its
// title, else the first in its package, else (a denial that names no package) the first.
// Several rules may share a code; the title (when the policy reports it) tells them apart. A
// denial of a package none of whose rules has its code (main's PolicyError about a package's
// malformed deny) has no rule behind it: another package's rule would be the wrong source.
func (idx ruleIndex) lookup(code, pkg, title string) ruleSource {
	rules := idx[code]
	if title != "" {
		if i := slices.IndexFunc(rules, func(r ruleSource) bool { return r.Title == title }); i >= 0 {
			return rules[i]
		}
	}
	if pkg != "" {
		if i := slices.IndexFunc(rules, func(r ruleSource) bool { return r.Package == pkg }); i >= 0 {
			return rules[i]
		}
		return ruleSource{}
	}
	if len(rules) > 0 {
		return rules[0]
	}
	return ruleSource{}
}

// Explanation is a Result with where each denial came from and what the policies noted.
type Explanation struct {
	Result  *Result           `json:"result"`
	Denials []ExplainedDenial `json:"denials"`
	// Notes are the print() outputs, the built-in errors, then the trace() notes.
	Notes []Note `json:"notes,omitempty"`
}

// ExplainedDenial is a denial with the rule behind it. File is empty when no rule's METADATA
// carries the code (e.g. the engine's own PolicyError).
type ExplainedDenial struct {
	Denial
	File        string `json:"file,omitempty"`
	Row         int    `json:"row,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Note is one print() output, built-in error or trace() note.
type Note struct {
	Kind     string `json:"kind"` // "print", "error" (a built-in error) or "trace"
	Location string `json:"location,omitempty"`
	Message  string `json:"message"`
}

// Explain evaluates like Evaluate with tracing on (slower; for people, not for the
// reconcile loop). The Explanation is never nil; the error is the Result's Err.
func (e *Engine) Explain(ctx context.Context, input map[string]any) (*Explanation, error) {
	tracer := topdown.NewBufferTracer()
	printed := &printCollector{}
	r := e.evaluate(ctx, input, rego.EvalQueryTracer(tracer), rego.EvalPrintHook(printed))

	ex := &Explanation{Result: r, Notes: printed.notes}
	for _, w := range r.Warnings {
		ex.Notes = append(ex.Notes, Note{Kind: "error", Message: w})
	}
	for _, ev := range *tracer {
		if ev.Op != topdown.NoteOp {
			continue
		}
		n := Note{Kind: "trace", Message: ev.Message}
		if ev.Location != nil {
			n.Location = fmt.Sprintf("%s:%d", ev.Location.File, ev.Location.Row)
		}
		ex.Notes = append(ex.Notes, n)
	}
	for i, d := range r.Decision.Denials {
		xd := ExplainedDenial{Denial: d}
		if i < len(r.rules) {
			src := r.rules[i]
			xd.File, xd.Row, xd.Rule, xd.Title, xd.Description = src.File, src.Row, src.Rule, src.Title, src.Description
		}
		ex.Denials = append(ex.Denials, xd)
	}
	return ex, r.Err
}

type printCollector struct{ notes []Note }

func (p *printCollector) Print(ctx print.Context, msg string) error {
	n := Note{Kind: "print", Message: msg}
	if ctx.Location != nil {
		n.Location = fmt.Sprintf("%s:%d", ctx.Location.File, ctx.Location.Row)
	}
	p.notes = append(p.notes, n)
	return nil
}
