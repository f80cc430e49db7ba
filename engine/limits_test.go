package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/policies"
)

// The limit tests feed the embedded policies inputs far larger than a cluster normally holds
// and check that the evaluation stays bounded: it completes with the right answer, or fails
// closed with a PolicyError that says why. They assert results, never times; the times and
// allocations are logged (go test -v -run Limits) so a regression shows.

// measured evaluates doc once and logs how long it took and how much it allocated.
func measured(t *testing.T, e *engine.Engine, doc map[string]any) *engine.Result {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := e.Evaluate(context.Background(), doc)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("evaluation took %v and allocated %.1f MiB (deadline %v)", took, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), engine.DefaultTimeout)
	return r
}

// notDeadline fails the test when r is the deadline fallback: the case is meant to finish
// within the deadline.
func notDeadline(t *testing.T, r *engine.Result) {
	t.Helper()
	require.False(t, errors.Is(r.Err, engine.ErrDeadline), "the evaluation missed its deadline: %v", r.Err)
	require.NoError(t, r.Err)
}

// patient is the embedded policies with a deadline ten times DefaultTimeout: the tests that
// evaluate thousands of operands or conditions assert the answer, not the machine's speed (a
// busy CI runner may be several times slower than a node); measured logs the time against
// DefaultTimeout.
var patient = sync.OnceValues(func() (*engine.Engine, error) {
	return engine.New(context.Background(), engine.Options{Timeout: 10 * engine.DefaultTimeout})
})

func patientEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := patient()
	require.NoError(t, err)
	return e
}

// healthy is an operand reporting Available=True, Progressing=False, Degraded=False.
func healthy(name string) *unstructured.Unstructured {
	return etcdCluster(name, cond("Available", "True", "InstallSucceeded", earliest),
		cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "False", "InstallSucceeded", earliest))
}

// thousands is 5,000 operands of one kind, each with its three conditions: far more instances
// of one CRD than an operator manages in practice.
const thousands = 5000

func TestLimitsThousandsOfOperandsAggregateWithinTheDeadline(t *testing.T) {
	w := upgradeWaiting()
	w.operands = nil
	for i := range thousands {
		w.operands = append(w.operands, healthy(fmt.Sprintf("cluster-%05d", i)))
	}
	doc := w.input(t)
	require.Len(t, doc["operands"], thousands)
	e := patientEngine(t)

	t.Run("all healthy: allowed", func(t *testing.T) {
		r := measured(t, e, doc)
		notDeadline(t, r)
		assert.True(t, r.Decision.Allowed, "denials: %v", r.Decision.Denials)
		assertConditions(t, "health", map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}, r.Health)
		assert.Contains(t, conditionOf(r, "Degraded").Message, fmt.Sprintf("%d of %d operands report Degraded=False", thousands, thousands))
	})

	t.Run("the last one degraded: denied, and the message names it", func(t *testing.T) {
		last := w.operands[thousands-1]
		*last = *etcdCluster(last.GetName(), cond("Available", "True", "InstallSucceeded", earliest),
			cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "True", "HealFailed", earlier))
		r := measured(t, e, w.input(t))
		notDeadline(t, r)
		assert.False(t, r.Decision.Allowed)
		assert.Equal(t, "OperatorDegraded", r.Decision.BlockedBy())
		assertConditions(t, "health", map[string]string{"Degraded": "True/HealFailed"}, r.Health)
		assert.Contains(t, conditionOf(r, "Degraded").Message, fmt.Sprintf("1 of %d operands report Degraded=True", thousands))
		assert.Contains(t, conditionOf(r, "Degraded").Message, last.GetName())
	})

	t.Run("every one degraded: the denial's facts are capped", func(t *testing.T) {
		for _, op := range w.operands {
			*op = *etcdCluster(op.GetName(), cond("Available", "True", "InstallSucceeded", earliest),
				cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "True", "HealFailed", earlier))
		}
		r := measured(t, e, w.input(t))
		notDeadline(t, r)
		assert.Equal(t, "OperatorDegraded", r.Decision.BlockedBy())
		d := r.Decision.Denials[0]
		assert.LessOrEqual(t, len(d.Facts), 16, "facts are capped")
		assert.Contains(t, d.Facts[len(d.Facts)-1], "more facts left out")
		for _, l := range d.Lift {
			assert.LessOrEqual(t, len(l.Text), engine.MaxText, "the remedy naming %d operands is cut", thousands)
		}
	})
}

// conditions is n conditions of the three health types in turn, the first of each type with
// status first and every later one with status later.
func conditions(n int, first, later map[string]string) []any {
	types := []string{"Available", "Progressing", "Degraded"}
	out := make([]any, 0, n)
	for i := range n {
		typ := types[i%3]
		status := later[typ]
		if i < 3 {
			status = first[typ]
		}
		out = append(out, map[string]any{"type": typ, "status": status, "reason": fmt.Sprintf("R%d", i),
			"message": fmt.Sprintf("condition %d", i), "lastTransitionTime": earlier.UTC().Format(time.RFC3339)})
	}
	return out
}

func TestLimitsThousandsOfConditionsOnOneObject(t *testing.T) {
	const many = 10000
	fine := map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}
	bad := map[string]string{"Available": "False", "Progressing": "True", "Degraded": "True"}
	e := patientEngine(t)

	t.Run("an operand: the first condition of a type wins", func(t *testing.T) {
		for _, tc := range []struct {
			name         string
			first, later map[string]string
			health       map[string]string
			denials      []string
		}{
			{"healthy first, then 9,997 bad repeats", fine, bad, map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}, nil},
			{"bad first, then 9,997 healthy repeats", bad, fine, map[string]string{"Available": "False", "Progressing": "True/R1", "Degraded": "True/R2"}, []string{"OperatorDegraded", "OperatorProgressing"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := upgradeWaiting()
				_ = unstructured.SetNestedSlice(w.operands[0].Object, conditions(many, tc.first, tc.later), "status", "conditions")
				r := measured(t, e, w.input(t))
				notDeadline(t, r)
				assertConditions(t, "health", tc.health, r.Health)
				assert.Equal(t, tc.denials, standingCodes(r))
			})
		}
	})

	t.Run("an OperatorCondition: the first Upgradeable wins", func(t *testing.T) {
		for _, tc := range []struct {
			name          string
			first, later  metav1.ConditionStatus
			upgradeBlocks bool
		}{
			{"True first, then 9,999 False", metav1.ConditionTrue, metav1.ConditionFalse, false},
			{"False first, then 9,999 True", metav1.ConditionFalse, metav1.ConditionTrue, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := upgradeWaiting()
				conds := make([]metav1.Condition, 0, many)
				for i := range many {
					status := tc.later
					if i == 0 {
						status = tc.first
					}
					conds = append(conds, metav1.Condition{Type: "Upgradeable", Status: status, Reason: fmt.Sprintf("R%d", i),
						Message: fmt.Sprintf("condition %d", i), ObservedGeneration: 1, LastTransitionTime: earlier})
				}
				w.opCond = operatorCondition("etcd.v1", conds...)
				r := measured(t, e, w.input(t))
				notDeadline(t, r)
				if tc.upgradeBlocks {
					assert.Equal(t, []string{"OperatorNotUpgradeable"}, standingCodes(r))
					assert.Contains(t, r.Decision.Denials[0].Message, "condition 0", "the first condition is the one reported")
				} else {
					assert.True(t, r.Decision.Allowed, "denials: %v", r.Decision.Denials)
				}
			})
		}
	})
}

func standingCodes(r *engine.Result) []string {
	var codes []string
	for _, d := range r.Decision.Denials {
		if !d.Overridden {
			codes = append(codes, d.Code)
		}
	}
	return codes
}

// nested is a map nested depth levels deep: {"a": {"a": ... {"leaf": true}}}.
func nested(depth int) map[string]any {
	v := map[string]any{"leaf": true}
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// The API server decodes JSON with a nesting limit of 10,000 (k8s.io/apimachinery's
// util/json and sigs.k8s.io/json): an operand whose status (x-kubernetes-preserve-unknown-fields)
// nests that deep can exist. The input conversion and the digest recurse through it; the
// policies read only status.conditions.
func TestLimitsDeeplyNestedOperandStatus(t *testing.T) {
	const depth = 10000
	w := upgradeWaiting()
	status := w.operands[0].Object["status"].(map[string]any)
	status["deep"] = nested(depth)
	doc := w.input(t)

	r := measured(t, embedded(t, nil), doc)
	notDeadline(t, r)
	assert.True(t, r.Decision.Allowed, "denials: %v", r.Decision.Denials)
	assertConditions(t, "health", map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}, r.Health)

	start := time.Now()
	digest := engine.Digest(doc)
	t.Logf("digest of the document took %v", time.Since(start))
	assert.Len(t, digest, 64)
	assert.NotEqual(t, engine.Digest(upgradeWaiting().input(t)), digest, "the digest covers the nested status")
}

// A 1 MiB message (an OperatorCondition's Upgradeable=False) becomes a denial message, a
// condition message and a fact: each is cut to MaxText, the result stays far under its cap, and
// the gate status built from it is within the API server's limits.
func TestLimitsHugeConditionMessage(t *testing.T) {
	huge := "migrating: " + strings.Repeat("x", 1<<20)
	w := upgradeWaiting()
	w.opCond = operatorCondition("etcd.v1", metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Migrating",
		Message: huge, ObservedGeneration: 1, LastTransitionTime: earlier})
	r := measured(t, embedded(t, nil), w.input(t))
	notDeadline(t, r)
	assert.Equal(t, []string{"OperatorNotUpgradeable"}, standingCodes(r))
	d := r.Decision.Denials[0]
	assert.LessOrEqual(t, len(d.Message), engine.MaxText)
	assert.True(t, strings.HasSuffix(d.Message, "…"), "cut, and says so")
	for _, f := range d.Facts {
		assert.LessOrEqual(t, len(f), engine.MaxText)
	}
	for _, c := range append(r.Conditions, r.Health...) {
		assert.LessOrEqual(t, len(c.Message), engine.MaxText, "condition %s", c.Type)
	}

	status, problems := gatestatus.Next(tollgatev1alpha1.UpgradeGateStatus{}, gatestatus.Observation{
		Generation: 1, Subscription: w.sub, Result: r, Digest: func() string { return "d" }, Now: metav1.NewTime(now),
	})
	assert.Empty(t, problems)
	for _, den := range status.Decision.Denials {
		assert.LessOrEqual(t, len(den.Message), gatestatus.MaxDenialText)
	}
	for _, c := range status.Conditions {
		assert.LessOrEqual(t, len(c.Message), gatestatus.MaxConditionMessage)
	}
}

// Operands whose Degraded messages are large each become a fact of the OperatorDegraded denial
// before the engine caps the facts: past MaxResultBytes the result is refused before it is
// copied out, and the decision fails closed with a PolicyError saying so.
func TestLimitsAResultOverItsCapFailsClosed(t *testing.T) {
	const operands = 12
	big := strings.Repeat("y", 1<<20) // 12 facts of 1 MiB: over the 8 MiB cap
	w := upgradeWaiting()
	w.operands = nil
	for i := range operands {
		op := healthy(fmt.Sprintf("cluster-%02d", i))
		conds, _, _ := unstructured.NestedSlice(op.Object, "status", "conditions")
		conds[2] = map[string]any{"type": "Degraded", "status": "True", "reason": "HealFailed", "message": big, "lastTransitionTime": earlier.UTC().Format(time.RFC3339)}
		_ = unstructured.SetNestedSlice(op.Object, conds, "status", "conditions")
		w.operands = append(w.operands, op)
	}
	r := measured(t, embedded(t, nil), w.input(t))
	require.ErrorIs(t, r.Err, engine.ErrResultShape)
	assert.False(t, r.Decision.Allowed)
	require.Len(t, r.Decision.Denials, 1)
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, r.Decision.Denials[0].Code)
	assert.Contains(t, r.Decision.Denials[0].Message, fmt.Sprintf("the result is larger than %d bytes", engine.MaxResultBytes))
	assert.Contains(t, r.Decision.Denials[0].Message, "Nothing is approved until it can")
}

// More operands than an evaluation judges: a PolicyError at once (fail closed), which names the
// cap, before the document is converted; at the cap the evaluation proceeds.
func TestLimitsMoreOperandsThanTheCapFailClosed(t *testing.T) {
	require.Equal(t, input.MaxOperands, engine.MaxOperands, "the builder lists one more than the engine judges")
	doc := upgradeWaiting().input(t)
	op := doc["operands"].([]any)[0]
	operands := make([]any, engine.MaxOperands+1)
	for i := range operands {
		operands[i] = op
	}
	e := embedded(t, nil)

	doc["operands"] = operands
	r := measured(t, e, doc)
	require.ErrorIs(t, r.Err, engine.ErrInputTooLarge)
	assert.False(t, r.Decision.Allowed)
	require.Len(t, r.Decision.Denials, 1)
	d := r.Decision.Denials[0]
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, d.Code)
	assert.Contains(t, d.Message, fmt.Sprintf("more than %d operands", engine.MaxOperands))
	assert.Contains(t, d.Facts[0], "fail closed")
	assert.Contains(t, d.Lift[0].Text, "approve the InstallPlan by hand")
	allocs := testing.AllocsPerRun(5, func() { e.Evaluate(context.Background(), doc) })
	t.Logf("refusing %d operands allocates %.0f times", len(operands), allocs)
	assert.Less(t, allocs, 100.0, "refused before the document is converted")

	doc["operands"] = operands[:engine.MaxOperands]
	r = measured(t, e, doc)
	assert.False(t, errors.Is(r.Err, engine.ErrInputTooLarge), "at the cap the operands are judged: %v", r.Err)
}

// contractKeys are the keys of input document version 1 whose value is a list, and those
// whose value is an object (possibly null), as policies.InputV1 gives them (its test holds
// them to policies/README.md).
func contractKeys(t *testing.T) (lists, objects []string) {
	t.Helper()
	for _, k := range policies.InputV1 {
		switch k.Type {
		case policies.List:
			lists = append(lists, k.Name)
		case policies.Object:
			objects = append(objects, k.Name)
		}
	}
	require.Contains(t, lists, "operands")
	require.Contains(t, objects, "operatorCondition")
	return lists, objects
}

// A key of the contract with a value of another type is refused before evaluation (fail
// closed), naming the key: the policies would read it as empty or missing and could drop the
// denial that rests on it (here the operator's Upgradeable=False).
func TestLimitsMisshapenInputFailsClosed(t *testing.T) {
	lists, objects := contractKeys(t)
	e := embedded(t, nil)
	w := upgradeWaiting()
	w.opCond = operatorCondition("etcd.v1", metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionFalse,
		Reason: "Migrating", Message: "migrating", ObservedGeneration: 1, LastTransitionTime: earlier})
	wrong := map[string][]any{}
	for _, k := range lists {
		wrong[k] = []any{"x", map[string]any{}, 1.0, true}
	}
	for _, k := range objects {
		wrong[k] = []any{"x", []any{}, 1.0, false}
	}
	for k, values := range wrong {
		for _, v := range values {
			t.Run(fmt.Sprintf("%s=%v", k, v), func(t *testing.T) {
				doc := w.input(t)
				doc[k] = v
				r := e.Evaluate(context.Background(), doc)
				require.ErrorIs(t, r.Err, engine.ErrInputShape)
				assert.False(t, r.Decision.Allowed)
				require.Len(t, r.Decision.Denials, 1)
				assert.Equal(t, tollgatev1alpha1.CodePolicyError, r.Decision.Denials[0].Code)
				assert.Contains(t, r.Decision.Denials[0].Message, "input."+k+" is ")
			})
		}
	}
	for _, k := range objects {
		doc := w.input(t)
		doc[k] = nil
		r := e.Evaluate(context.Background(), doc)
		assert.False(t, errors.Is(r.Err, engine.ErrInputShape), "%s may be null: %v", k, r.Err)
	}
	doc := w.input(t)
	r := e.Evaluate(context.Background(), doc)
	require.NoError(t, r.Err)
	assert.Equal(t, "OperatorNotUpgradeable", r.Decision.BlockedBy())
}
