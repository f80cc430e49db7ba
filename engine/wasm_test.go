package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	// OPA's Wasm target, run in-process by wazero (pure Go): the evaluator OPA offers besides
	// its tree-walking one, measured against it on the same inputs.
	_ "github.com/open-policy-agent/opa/v1/features/wasm"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/stretchr/testify/require"
)

// TestWasmTargetAgrees checks that BenchmarkWasmTarget measures the same work as the other
// evaluation benchmarks: the policies compiled to Wasm give the same result on every
// benchmark input.
func TestWasmTargetAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the policies to Wasm")
	}
	topdown, wasm := bareQuery(t), bareQuery(t, rego.Target("wasm"))
	for _, in := range benchInputs {
		t.Run(in.name, func(t *testing.T) {
			input := in.input(t)
			require.JSONEq(t, resultJSON(t, topdown, input), resultJSON(t, wasm, input))
		})
	}
}

// resultJSON is the query's one result on input, as JSON.
func resultJSON(t *testing.T, pq rego.PreparedEvalQuery, input map[string]any) string {
	rs, err := pq.Eval(context.Background(), rego.EvalInput(input))
	require.NoError(t, err)
	require.Len(t, rs, 1)
	out, err := json.Marshal(rs[0].Expressions[0].Value)
	require.NoError(t, err)
	return string(out)
}

// BenchmarkWasmTarget is the bare query with OPA's Wasm target (rego.Target("wasm")), given
// the input per evaluation: the like-for-like comparison with BenchmarkBareOPAInputPerEval.
func BenchmarkWasmTarget(b *testing.B) {
	ctx := context.Background()
	eachInput(b, func(b *testing.B, input map[string]any) {
		pq := bareQuery(b, rego.Target("wasm"))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pq.Eval(ctx, rego.EvalInput(input)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
