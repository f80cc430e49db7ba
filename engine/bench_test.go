package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// benchInput is a realistic document: an upgrade awaiting approval, ten operands (one
// progressing), five visible catalogs (one unhealthy).
func benchInput(tb testing.TB) map[string]any {
	doc := benchWorld(10, 7).input(tb)
	require.Len(tb, doc["operands"], 10)
	require.Len(tb, doc["catalogSources"], 5)
	return doc
}

// benchWorld is an upgrade awaiting approval with n operands and five visible catalogs (one
// unhealthy); the operand at index progressing (none when out of range) reports
// Progressing=True.
func benchWorld(n, progressing int) *world {
	w := upgradeWaiting()
	for i := len(w.operands); i < n; i++ {
		status := "False"
		if i == progressing {
			status = "True"
		}
		w.operands = append(w.operands, etcdCluster(fmt.Sprintf("cluster-%02d", i),
			cond("Available", "True", "InstallSucceeded", earliest),
			cond("Progressing", status, "UpgradeInProgress", earlier),
			cond("Degraded", "False", "InstallSucceeded", earliest)))
	}
	for i, state := range []string{"READY", "READY", "TRANSIENT_FAILURE", "READY"} {
		w.catalogs = append(w.catalogs, imageCatalog("olm", fmt.Sprintf("catalog-%d", i), state))
	}
	return w
}

// benchInput50 is the approval path at a larger scale: fifty healthy operands, five catalogs,
// nothing stands in the way.
func benchInput50(tb testing.TB) map[string]any {
	doc := benchWorld(50, -1).input(tb)
	require.Len(tb, doc["operands"], 50)
	return doc
}

// heldInput is the benchmark input held several times over: the operator reports
// Upgradeable=False, the source catalog is down, an operand is degraded besides the one
// progressing, and the gate's override of OperatorProgressing has expired.
func heldInput(tb testing.TB) map[string]any {
	w := benchWorld(10, 7)
	w.operands[3] = etcdCluster("cluster-03", cond("Available", "False", "HealFailed", earlier),
		cond("Progressing", "False", "HealFailed", earlier), cond("Degraded", "True", "HealFailed", earlier))
	w.opCond = operatorCondition("etcd.v1", metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionFalse,
		Reason: "Migrating", Message: "the operator is migrating its CRs", ObservedGeneration: 1, LastTransitionTime: earlier})
	w.catalogs[0].Status.GRPCConnectionState.LastObservedState = "TRANSIENT_FAILURE"
	w.gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: "OperatorProgressing", Reason: "CHG-1234: expected",
		Expires: &metav1.Time{Time: now.Add(-time.Hour)}}}
	return w.input(tb)
}

// noOperandsInput is an upgrade awaiting approval whose operator has no operands (its CSV owns
// no CRD, or none has instances), with one catalog: the shape of olmsim's tenants, whose
// approvals and flips the scale targets are measured on.
func noOperandsInput(tb testing.TB) map[string]any {
	w := upgradeWaiting()
	w.operands = nil
	doc := w.input(tb)
	require.Empty(tb, doc["operands"])
	require.Len(tb, doc["catalogSources"], 1)
	return doc
}

// benchInputs are the inputs every evaluation benchmark runs on, one sub-benchmark each (their
// names are what hack/benchtable reads): the benchmark input, held by one progressing operand;
// fifty healthy operands, allowed; a document held by four denials; an upgrade without
// operands, allowed; and an OLM v1 extension's move to its successor, allowed.
var benchInputs = []struct {
	name    string
	input   func(testing.TB) map[string]any
	blocked string // the decision's BlockedBy
}{
	{"bench", benchInput, "OperatorProgressing"},
	{"operands-50", benchInput50, ""},
	{"held", heldInput, "CatalogSourceUnhealthy"},
	{"no-operands", noOperandsInput, ""},
	{"extension", extensionInput, ""},
}

// eachInput runs bench as one sub-benchmark per benchInputs entry.
func eachInput(b *testing.B, bench func(b *testing.B, input map[string]any)) {
	e := embedded(b, nil)
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			input := in.input(b)
			r := e.Evaluate(context.Background(), input)
			require.NoError(b, r.Err)
			require.Equal(b, in.blocked, r.Decision.BlockedBy())
			bench(b, input)
		})
	}
}

// BenchmarkEvaluate is one Evaluate: what every event, recheck and catalog flip pays per
// Subscription. It also reports the expressions one decision evaluates (exprs/op), which,
// unlike its time, does not move with the machine's load.
func BenchmarkEvaluate(b *testing.B) {
	e := embedded(b, nil)
	pq := bareQuery(b)
	ctx := context.Background()
	eachInput(b, func(b *testing.B, input map[string]any) {
		b.ReportAllocs()
		for b.Loop() {
			if r := e.Evaluate(ctx, input); r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		b.ReportMetric(float64(expressions(b, pq, input)), "exprs/op")
	})
}

// expressions is how many expressions the query evaluates on input, as OPA's profiler counts
// them (the sum of num_eval that `opa eval --profile` lists).
func expressions(b *testing.B, pq rego.PreparedEvalQuery, input map[string]any) int {
	p := profiler.New()
	_, err := pq.Eval(context.Background(), rego.EvalInput(input), rego.EvalQueryTracer(p))
	require.NoError(b, err)
	n := 0
	for _, s := range p.ReportTopNResults(0, nil) {
		n += s.NumEval
	}
	return n
}

// BenchmarkBareOPA is the floor: the same modules and input in a plain prepared query, no
// result decoding, no deadline, no recovery. Evaluate's ns/op divided by this is the
// engine's overhead. Note that rego.Input given to rego.New is converted once, at prepare
// time, so this floor does not pay for converting the input as every real evaluation must.
func BenchmarkBareOPA(b *testing.B) {
	ctx := context.Background()
	eachInput(b, func(b *testing.B, input map[string]any) {
		pq := bareQuery(b, rego.Input(input))
		rs, err := pq.Eval(ctx)
		require.NoError(b, err)
		require.Len(b, rs, 1)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pq.Eval(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBareOPAInputPerEval is the bare query given the input at each evaluation
// (rego.EvalInput), the like-for-like comparison with Evaluate.
func BenchmarkBareOPAInputPerEval(b *testing.B) {
	ctx := context.Background()
	eachInput(b, func(b *testing.B, input map[string]any) {
		pq := bareQuery(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pq.Eval(ctx, rego.EvalInput(input)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEngineOverBareOPA interleaves one Evaluate and one bare evaluation with the input
// given per call, and reports their time ratio as engine/bare: the engine's overhead,
// measured against its baseline in the same run, so machine noise affects both alike.
func BenchmarkEngineOverBareOPA(b *testing.B) {
	e := embedded(b, nil)
	ctx := context.Background()
	eachInput(b, func(b *testing.B, input map[string]any) {
		pq := bareQuery(b)
		var engineTime, bareTime time.Duration
		for b.Loop() {
			start := time.Now()
			if r := e.Evaluate(ctx, input); r.Err != nil {
				b.Fatal(r.Err)
			}
			mid := time.Now()
			if _, err := pq.Eval(ctx, rego.EvalInput(input)); err != nil {
				b.Fatal(err)
			}
			engineTime += mid.Sub(start)
			bareTime += time.Since(mid)
		}
		b.ReportMetric(float64(engineTime)/float64(bareTime), "engine/bare")
		b.ReportMetric(float64(engineTime.Nanoseconds())/float64(b.N), "engine-ns/eval")
	})
}

func bareQuery(tb testing.TB, extra ...func(*rego.Rego)) rego.PreparedEvalQuery {
	opts := []func(*rego.Rego){
		rego.Query(engine.Query),
		rego.Store(inmem.NewFromObject(map[string]any{"tollgate": map[string]any{"config": map[string]any{}}})),
	}
	opts = append(opts, extra...)
	err := fs.WalkDir(benchPolicies, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") || strings.HasSuffix(p, "_test.rego") {
			return err
		}
		src, err := fs.ReadFile(benchPolicies, p)
		opts = append(opts, rego.Module(p, string(src)))
		return err
	})
	require.NoError(tb, err)
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	require.NoError(tb, err)
	return pq
}

// BenchmarkEvaluateParts is one Evaluate of the benchmark input in its three parts, each alone:
// converting the input document into OPA's values, evaluating the query on the converted input
// (with the result written as JSON text, as Evaluate has it), and decoding that text into the
// typed Result. The three add up to about one Evaluate.
func BenchmarkEvaluateParts(b *testing.B) {
	e := embedded(b, nil)
	ctx := context.Background()
	input := benchInput(b)
	value, err := engine.ConvertInput(input)
	require.NoError(b, err)
	result, err := e.EvalConverted(ctx, value)
	require.NoError(b, err)
	r, err := e.Decode(result)
	require.NoError(b, err)
	require.Equal(b, "OperatorProgressing", r.Decision.BlockedBy())
	b.Run("convert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := engine.ConvertInput(input); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("query", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.EvalConverted(ctx, value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Decode(result); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ruleCosts are the rules whose cost BenchmarkRules reports, each with what it gives the result.
// A rule's cost includes every rule it reads, so the figures overlap: health.conditions is part
// of main.decision too (the health denials read it).
var ruleCosts = []struct{ name, ref string }{
	{"result", "data.tollgate.main.result"},
	{"decision", "data.tollgate.main.decision"},
	{"upgrade.deny", "data.tollgate.upgrade.deny"},
	{"health.conditions", "data.tollgate.health.conditions"},
	{"health.hold", `data.tollgate.health.hold("Progressing", "etcd.v1")`},
	{"subscription.conditions", "data.tollgate.subscription.conditions"},
	{"catalogStatus", "data.tollgate.subscription.catalog_status"},
	{"catalogValidation", "data.tollgate.catalogsource.validation"},
}

// BenchmarkRules is the cost of each of ruleCosts on the benchmark input, converted once: each
// rule evaluated alone, as its own query, which pays for every rule it reads and for nothing
// else (the query only counts the value, so no benchmark pays for handing it over). OPA's
// profiler (opa eval --profile) attributes time to the expressions that happen to be running
// when a rule's cached value is first computed; these figures do not depend on that.
func BenchmarkRules(b *testing.B) {
	ctx := context.Background()
	input := benchInput(b)
	value, err := engine.ConvertInput(input)
	require.NoError(b, err)
	for _, rc := range ruleCosts {
		b.Run(rc.name, func(b *testing.B) {
			pq := bareQuery(b, rego.Query(fmt.Sprintf("count([1 | _ = %s]) == 1", rc.ref)))
			rs, err := pq.Eval(ctx, rego.EvalParsedInput(value))
			require.NoError(b, err)
			require.Len(b, rs, 1, "%s is undefined on the benchmark input", rc.ref)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pq.Eval(ctx, rego.EvalParsedInput(value)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
