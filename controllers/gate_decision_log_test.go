package controllers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// TestTheDecisionLogHoldsEachChangeOnce: a decision logged ahead of an approval is not
// logged again by the status write that follows; and when that approval did not happen and
// the decision went back before any status held it, the way back is logged too.
func TestTheDecisionLogHoldsEachChangeOnce(t *testing.T) {
	held := tollgatev1alpha1.Decision{Allowed: false, BlockedBy: "PlanPrepared"}
	allowed := tollgatev1alpha1.Decision{Allowed: true}
	gate := &tollgatev1alpha1.UpgradeGate{}
	gate.Namespace, gate.Name = "ns", "etcd"
	gate.Status.Decision = held
	key := types.NamespacedName{Namespace: "ns", Name: "etcd"}

	t.Run("ahead, then the status write", func(t *testing.T) {
		sink := &outcomes{}
		r := &GateReconciler{DecisionLog: decisionlog.New(sink, decisionlog.Options{})}
		r.logAhead(gate, allowed, decided(allowed))
		r.logWritten(key, held, allowed, decided(allowed))
		assert.Equal(t, []bool{true}, sink.allowed, "the allowing decision, once")
	})
	t.Run("ahead, then back before any status held it", func(t *testing.T) {
		sink := &outcomes{}
		r := &GateReconciler{DecisionLog: decisionlog.New(sink, decisionlog.Options{})}
		r.logAhead(gate, allowed, decided(allowed))
		r.logWritten(key, held, held, decided(held))
		r.logAhead(gate, allowed, decided(allowed))
		r.logWritten(key, held, allowed, decided(allowed))
		assert.Equal(t, []bool{true, false, true}, sink.allowed, "allowed, held again, allowed again")
	})
	t.Run("ahead of an approval the status already allows", func(t *testing.T) {
		sink := &outcomes{}
		r := &GateReconciler{DecisionLog: decisionlog.New(sink, decisionlog.Options{})}
		was := gate.DeepCopy()
		was.Status.Decision = allowed
		r.logAhead(was, allowed, decided(allowed))
		r.logWritten(key, allowed, allowed, decided(allowed))
		assert.Empty(t, sink.allowed, "nothing changed, nothing logged")
	})
}

func decided(d tollgatev1alpha1.Decision) *approval.Decision {
	return &approval.Decision{Document: &input.Document{}, Result: &engine.Result{Decision: engine.Decision{Allowed: d.Allowed}}}
}

// outcomes keeps whether each decision logged allowed.
type outcomes struct{ allowed []bool }

func (s *outcomes) Write(ev *decisionlog.Event) error {
	res, _ := ev.Result.(*engine.Result)
	s.allowed = append(s.allowed, res.Decision.Allowed)
	return nil
}

func (s *outcomes) Run(ctx context.Context) error { <-ctx.Done(); return nil }
