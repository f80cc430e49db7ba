package engine

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/tollgate-dev/tollgate/policies"
)

// The parts of one Evaluate, for the benchmarks of engine_test that say where its time goes
// (BenchmarkEvaluateParts): converting the input, evaluating the query on the converted input
// (its value written as JSON text, as Evaluate has it written), and decoding that into a
// Result. Evaluate is these three and checks that cost next to nothing.

// ConvertInput converts input as Evaluate does before it evaluates.
func ConvertInput(input map[string]any) (ast.Value, error) {
	return inputValue(policies.WithMove(input))
}

// EvalConverted evaluates the query on an input ConvertInput converted, as Evaluate does, and
// returns the result as Decode reads it.
func (e *Engine) EvalConverted(ctx context.Context, value ast.Value) (any, error) {
	rs, err := e.prepared.Eval(ctx, rego.EvalParsedInput(value), rego.EvalGenerateJSON(boundedJSON))
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("%d results", len(rs))
	}
	return rs[0].Expressions[0].Value, nil
}

// Decode turns what EvalConverted returns into a Result, as Evaluate does.
func (e *Engine) Decode(v any) (*Result, error) {
	w, err := decodeResult(v)
	if err != nil {
		return nil, err
	}
	return e.finishDecision(w), nil
}
