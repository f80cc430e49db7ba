package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// Condition is one condition as the policies report it; the controller adds times and
// observedGeneration when it writes status.
type Condition struct {
	Type    string                 `json:"type"`
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message"`
}

// Violation is one problem with a CatalogSource spec.
type Violation struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// CatalogValidation is the validity of one visible CatalogSource's spec.
type CatalogValidation struct {
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Valid      bool        `json:"valid"`
	Violations []Violation `json:"violations,omitempty"`
}

// Denial is one denial as the policies report it: the part the UpgradeGate records, plus
// the facts it rests on and the ways to lift it, which explain renders.
type Denial struct {
	tollgatev1alpha1.Denial
	// Facts are what the denial rests on, one sentence each.
	Facts []string `json:"facts,omitempty"`
	// Lift are the ways to lift it; the policies offer only remedies that would.
	Lift []Remedy `json:"lift,omitempty"`
}

// Remedy is one way to lift a denial: what must happen, and what to run when there is
// something to run.
type Remedy struct {
	Text string `json:"text"`
	// Command is a literal command to run.
	Command string `json:"command,omitempty"`
	// Override is a denial code an admin may waive in the UpgradeGate's spec.overrides.
	Override string `json:"override,omitempty"`
	// Subscription is another Subscription whose own remedies lift this denial.
	Subscription *ObjectKey `json:"subscription,omitempty"`
}

// ObjectKey names a namespaced object.
type ObjectKey struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Decision says whether the upgrade may proceed and why not.
type Decision struct {
	// Allowed is true only when the policy said so and no denial stands.
	Allowed bool `json:"allowed"`
	// Denials are sorted: standing ones first, then by code, then by message; at most
	// MaxDenials of them.
	Denials []Denial `json:"denials,omitempty"`
	// Truncated counts the denials dropped by the cap (the least important ones: overridden
	// before standing, then the last by code).
	Truncated int `json:"truncated,omitempty"`
}

// BlockedBy is the code of the first standing denial, or "" when none stands.
func (d Decision) BlockedBy() string {
	for _, den := range d.Denials {
		if !den.Overridden {
			return den.Code
		}
	}
	return ""
}

// Result is the typed form of data.tollgate.main.result.
type Result struct {
	Conditions        []Condition                      `json:"conditions"`
	Health            []Condition                      `json:"health"`
	State             string                           `json:"state"`
	UpToDate          bool                             `json:"upToDate"`
	CatalogStatus     []tollgatev1alpha1.CatalogStatus `json:"catalogStatus"`
	CatalogValidation []CatalogValidation              `json:"catalogValidation"`
	Decision          Decision                         `json:"decision"`
	// Revision is the policy revision that produced the result.
	Revision string `json:"revision"`
	// RecheckAt is the earliest instant, strictly after the evaluation's input.now, at which
	// time alone could change this result (an override's expiry, a maintenance window's edge,
	// a freeze's start or end, a soak time's end: result.recheckAt); zero when nothing in it
	// depends on time, or when the policy's recheckAt is unusable (a Warning says why). The
	// controller evaluates the gate again at RecheckAt rather than periodically; it keeps a long
	// safety-net resync for a zero RecheckAt and for what a policy fails to report.
	RecheckAt time.Time `json:"recheckAt,omitzero"`
	// Warnings are built-in function errors (e.g. a malformed timestamp) that made an
	// expression undefined. The decision stands when it denies; an allowed decision with
	// warnings becomes the PolicyError fallback, since a denial may have been lost. An unusable
	// recheckAt adds a warning too, after that check: it never changes the decision.
	Warnings []string `json:"warnings,omitempty"`
	// Err is non-nil when the result is the PolicyError fallback; errors.Is it against the
	// sentinels (ErrDeadline, ErrUndefined, ErrResultShape, ErrEvaluation, ErrInput,
	// ErrInputTooLarge, ErrInputShape).
	Err error `json:"-"`

	rules []ruleSource // the rule behind each of Decision.Denials, for Explain
}

// wireResult is the result as the policies write it: denials may also carry the package that
// produced them and the rule's METADATA title, which pick the exact rule when several rules
// share a code.
type wireResult struct {
	Result
	// RecheckAt is result.recheckAt as the policy wrote it, checked by recheckAt: a malformed
	// one must not fail the whole decoding.
	RecheckAt any `json:"recheckAt"`
	Decision  struct {
		Allowed bool         `json:"allowed"`
		Denials []wireDenial `json:"denials"`
	} `json:"decision"`
}

type wireDenial struct {
	Denial
	Package string `json:"package"`
	Title   string `json:"title"`
}

// Unavailable is the fail-closed result for callers that cannot evaluate at all (the admin
// policy has never compiled): nothing is allowed and one PolicyError denial says why.
func Unavailable(revision string, err error) *Result { return policyError(revision, err) }

// policyError is the fail-closed result: nothing is allowed and one PolicyError denial says
// what went wrong.
func policyError(revision string, err error) *Result {
	return &Result{
		Revision: revision,
		Err:      err,
		Decision: Decision{Denials: []Denial{{
			Denial: tollgatev1alpha1.Denial{
				Code:    tollgatev1alpha1.CodePolicyError,
				Message: fmt.Sprintf("The upgrade policy could not decide (policy revision %s): %v. Nothing is approved until it can.", revision, err),
				Source:  "engine",
			},
			Facts: []string{"the policies could not decide, so nothing is approved (fail closed)"},
			Lift: []Remedy{{
				Text:    "fix the policy (PolicyError cannot be overridden): each policy ConfigMap says what is wrong in its tollgate.dev/policy-status annotation, and the manager's log names bundle errors; tollgate explain --trace shows the policies' notes",
				Command: `kubectl get configmaps -A -l tollgate.dev/policy -o 'custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,STATUS:.metadata.annotations.tollgate\.dev/policy-status'`,
			}},
		}}},
	}
}

// decodeResult turns the policy's value into a Result, checking the shape the contract
// documents. Absent optional lists are fine; a wrong type anywhere is an error, and
// decision.allowed must be present and a bool.
func decodeResult(v any) (*wireResult, error) {
	var text []byte
	if enc, ok := v.(encodedResult); ok {
		if err := checkShape(enc.value); err != nil {
			return nil, err
		}
		text = enc.text
	} else {
		// JSON data: written as text, then read as the evaluation's text is.
		if err := checkShape(v); err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrResultShape, err)
		}
		text = b
	}
	// Unmarshalling into the typed struct checks every field's type. Unknown fields are
	// ignored, so policies may add keys before the engine learns them.
	var w wireResult
	if err := json.Unmarshal(text, &w); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrResultShape, err)
	}
	for _, d := range w.Decision.Denials {
		if d.Code == "" {
			return nil, fmt.Errorf("%w: a denial has no code (message %q)", ErrResultShape, d.Message)
		}
	}
	return &w, nil
}

// recheckAt reads result.recheckAt (v) for an evaluation at now (input.now): an RFC 3339 time
// strictly after now, in UTC. Null or absent is zero (nothing depends on time). Anything else is
// zero and a warning: not a string or not RFC 3339 (the engine cannot guess when to look again;
// guessing a short interval would make one broken policy re-evaluate every gate periodically,
// the load recheckAt exists to avoid), or not after now (the embedded tollgate.main never
// reports one; clamping it to now would requeue at once, and again on every evaluation that
// reports it). The controller's safety-net resync then bounds how stale the result can get.
func recheckAt(v any, now any) (time.Time, string) {
	if v == nil {
		return time.Time{}, ""
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Sprintf("result.recheckAt is %s, want an RFC 3339 time or null: ignored, the gate is evaluated again at the next resync", typeName(v))
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Sprintf("result.recheckAt %q is not an RFC 3339 time: ignored, the gate is evaluated again at the next resync", s)
	}
	if nowText, ok := now.(string); ok {
		if n, err := time.Parse(time.RFC3339Nano, nowText); err == nil && !t.After(n) {
			return time.Time{}, fmt.Sprintf("result.recheckAt %s is not after input.now %s: ignored, the gate is evaluated again at the next resync", s, nowText)
		}
	}
	return t.UTC(), ""
}

// typeName names the JSON type of v, a value of a decoded document or result; a list or map of
// another Go type (a document built in Go) counts as an array or an object.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "missing or null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64, int, int64:
		return "a number"
	}
	switch {
	case isList(v):
		return "an array"
	case isObject(v):
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// isList says whether v is a list: []any, or a slice or array of another Go type.
func isList(v any) bool {
	t := reflect.TypeOf(v)
	return t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array)
}

// isObject says whether v is an object: map[string]any, or a map of another Go type.
func isObject(v any) bool {
	t := reflect.TypeOf(v)
	return t != nil && t.Kind() == reflect.Map
}

// MaxText caps every text a policy writes into a result (a message, a fact, a remedy), in
// bytes; longer ones are cut and end in "…". A policy's output must fit in an UpgradeGate.
const MaxText = 2048

// MaxResultBytes caps the result a policy returns, about as JSON: a larger one is a
// PolicyError, found before it is copied out of the evaluator (a few rules can return
// gigabytes by repeating one long string).
const MaxResultBytes = 8 << 20

// boundedJSON writes the query's value as JSON text when it is not larger than MaxResultBytes
// (rego.EvalGenerateJSON); decodeResult reads it.
func boundedJSON(t *ast.Term, _ *rego.EvalContext) (any, error) {
	budget := MaxResultBytes
	if !within(t.Value, &budget) {
		return nil, fmt.Errorf("%w: the result is larger than %d bytes", ErrResultShape, MaxResultBytes)
	}
	text, err := appendJSON(make([]byte, 0, MaxResultBytes-budget+64), t.Value)
	if err != nil {
		return nil, err
	}
	return encodedResult{value: t.Value, text: text}, nil
}

// checkShape checks what the result must be before it is decoded: an object whose decision is
// an object with a boolean allowed. v is the query's value (ast) or JSON data.
func checkShape(v any) error {
	decision, ok := member(v, "decision")
	if !ok {
		return fmt.Errorf("%w: result is %s, want an object", ErrResultShape, typeName(scalar(v)))
	}
	allowed, ok := member(decision, "allowed")
	if !ok {
		return fmt.Errorf("%w: result.decision is %s, want an object", ErrResultShape, typeName(scalar(decision)))
	}
	if _, ok := allowed.(bool); !ok {
		return fmt.Errorf("%w: result.decision.allowed is %s, want a boolean", ErrResultShape, typeName(allowed))
	}
	return nil
}

// member is the value of key in obj (nil when obj has none) and whether obj is an object. obj
// is JSON data or an ast value; an ast member comes back as scalar makes it.
func member(obj any, key string) (any, bool) {
	switch o := obj.(type) {
	case map[string]any:
		return o[key], true
	case ast.Object:
		t := o.Get(ast.StringTerm(key))
		if t == nil {
			return nil, true
		}
		if inner, ok := t.Value.(ast.Object); ok {
			return inner, true
		}
		return scalar(t.Value), true
	}
	return nil, false
}

// scalar is an ast value as the JSON data typeName names alike: null, booleans, strings,
// numbers, lists (sets are lists in JSON) and objects; anything else is left as it is.
func scalar(v any) any {
	switch x := v.(type) {
	case ast.Null:
		return nil
	case ast.Boolean:
		return bool(x)
	case ast.String:
		return string(x)
	case ast.Number:
		return json.Number(x)
	case *ast.Array, ast.Set:
		return []any{}
	case ast.Object:
		return map[string]any{}
	}
	return v
}

// within subtracts the size of v (about as JSON) from budget, and says whether it stayed
// positive; it stops walking as soon as it does not.
func within(v ast.Value, budget *int) bool {
	each := func(t *ast.Term) bool { // true stops
		*budget--
		return !within(t.Value, budget)
	}
	switch x := v.(type) {
	case ast.String:
		*budget -= len(x) + 2
	case ast.Number:
		*budget -= len(x)
	case *ast.Array:
		for i := 0; i < x.Len() && *budget >= 0; i++ {
			each(x.Elem(i))
		}
	case ast.Set:
		x.Until(each)
	case ast.Object:
		x.Until(func(k, v *ast.Term) bool { return each(k) || each(v) })
	default:
		*budget -= 5
	}
	return *budget >= 0
}

// maxFacts and maxLift cap a denial's facts and remedies.
const (
	maxFacts = 16
	maxLift  = 8
)

// notOverridable are the codes no policy may mark overridden: PolicyError means the policies
// could not be trusted, and a waiver of InstallPlanIncludesBlockedOperator cannot lift the
// hold (policies/README.md). tollgate.main refuses such overrides in Rego; the engine enforces
// it again, so that a main replaced by a ConfigMap or bundle cannot either.
var notOverridable = []string{tollgatev1alpha1.CodePolicyError, tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator}

// finishDecision names each denial's rule, sorts and caps the denials, and makes Allowed
// consistent with them: a standing denial always wins over allowed=true, a PolicyError always
// stands, and so does InstallPlanIncludesBlockedOperator.
func (e *Engine) finishDecision(w *wireResult) *Result {
	r := &w.Result
	type entry struct {
		denial Denial
		rule   ruleSource
	}
	entries := make([]entry, 0, len(w.Decision.Denials))
	policyError := false
	for _, d := range w.Decision.Denials {
		rule := e.rules.lookup(d.Code, d.Package, d.Title)
		if d.Source == "" {
			d.Source = rule.String()
		}
		enforceNotOverridable(&d.Denial)
		policyError = policyError || d.Code == tollgatev1alpha1.CodePolicyError
		entries = append(entries, entry{clipDenial(d.Denial), rule})
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		if a.denial.Overridden != b.denial.Overridden {
			if !a.denial.Overridden {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.denial.Code, b.denial.Code), cmp.Compare(a.denial.Message, b.denial.Message))
	})
	r.Decision = Decision{Allowed: w.Decision.Allowed && !policyError}
	if n := len(entries); n > MaxDenials {
		r.Decision.Truncated = n - MaxDenials
		entries = entries[:MaxDenials]
	}
	for _, en := range entries {
		r.Decision.Denials = append(r.Decision.Denials, en.denial)
		r.rules = append(r.rules, en.rule)
	}
	if r.Decision.BlockedBy() != "" {
		r.Decision.Allowed = false
	}
	clipConditions(r.Conditions)
	clipConditions(r.Health)
	return r
}

// enforceNotOverridable makes a denial of a code that cannot be overridden stand, whatever
// the policy said, and says so in a fact.
func enforceNotOverridable(d *Denial) {
	if !d.Overridden || !slices.Contains(notOverridable, d.Code) {
		return
	}
	d.Overridden, d.OverrideReason = false, ""
	d.Facts = append(d.Facts, fmt.Sprintf("the policy marked this %s denial overridden, but %s cannot be overridden: it stands", d.Code, d.Code))
	if len(d.Lift) == 0 {
		d.Lift = []Remedy{{Text: "the condition this rule checks must stop holding (" + d.Code + " cannot be overridden)"}}
	}
}

// clipDenial caps the texts, facts and remedies of a denial (MaxText, maxFacts, maxLift).
func clipDenial(d Denial) Denial {
	d.Message, d.OverrideReason, d.Source = clip(d.Message), clip(d.OverrideReason), clip(d.Source)
	if len(d.Facts) > maxFacts {
		d.Facts = append(d.Facts[:maxFacts-1:maxFacts-1], fmt.Sprintf("(%d more facts left out)", len(d.Facts)-maxFacts+1))
	}
	for i := range d.Facts {
		d.Facts[i] = clip(d.Facts[i])
	}
	if len(d.Lift) > maxLift {
		d.Lift = d.Lift[:maxLift]
	}
	for i := range d.Lift {
		// A cut command would not be safe to paste, nor a cut code overridable: drop them.
		if len(d.Lift[i].Command) > MaxText {
			d.Lift[i].Command = ""
		}
		if len(d.Lift[i].Override) > MaxText {
			d.Lift[i].Override = ""
		}
		d.Lift[i].Text = clip(d.Lift[i].Text)
	}
	return d
}

func clipConditions(conds []Condition) {
	for i := range conds {
		conds[i].Message = clip(conds[i].Message)
	}
}

// clip cuts s to at most MaxText bytes, on a character boundary, ending in "…".
func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
