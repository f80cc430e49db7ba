package controllers

import (
	"context"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/tollgate-dev/tollgate/engine"
)

// Policies holds the policy set in service. A new set replaces it atomically, and every
// gate is re-evaluated; evaluations under way finish on the set they started with.
type Policies struct {
	current atomic.Pointer[engine.Engine]
	changed chan event.GenericEvent
}

// NewPolicies serves e until a new set is swapped in.
func NewPolicies(e *engine.Engine) *Policies {
	p := &Policies{changed: make(chan event.GenericEvent, 1)}
	p.current.Store(e)
	return p
}

// Engine is the policy set in service.
func (p *Policies) Engine() *engine.Engine { return p.current.Load() }

// Evaluate evaluates input with the policy set in service.
func (p *Policies) Evaluate(ctx context.Context, input map[string]any) *engine.Result {
	return p.Engine().Evaluate(ctx, input)
}

// Swap puts e in service and asks for every gate to be re-evaluated.
func (p *Policies) Swap(e *engine.Engine) {
	p.current.Store(e)
	select {
	case p.changed <- event.GenericEvent{}:
	default: // a re-evaluation is already queued
	}
}
