package controllers

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/tollgate-dev/tollgate/engine"
)

// Policies holds the policy set in service. A new set replaces it atomically, and every
// gate is re-evaluated; evaluations under way finish on the set they started with.
//
// At start-up the admin's policy sources (ConfigMaps) are not loaded yet: until the first
// load has been tried, Loaded is false and the gates wait, so nothing is approved on the
// embedded policies alone. If that first load fails, there is no good admin set to fall back
// to, and every evaluation is a PolicyError denial until a set compiles.
type Policies struct {
	current atomic.Pointer[engine.Engine]
	changed chan event.GenericEvent

	loaded   chan struct{}
	loadOnce sync.Once
	failure  atomic.Pointer[error] // set while no admin policy set has ever compiled
}

// NewPolicies serves e until a new set is swapped in.
func NewPolicies(e *engine.Engine) *Policies {
	p := &Policies{changed: make(chan event.GenericEvent, 1), loaded: make(chan struct{})}
	p.current.Store(e)
	return p
}

// Loaded says whether the first load of the admin policy sources has been tried.
func (p *Policies) Loaded() bool {
	select {
	case <-p.loaded:
		return true
	default:
		return false
	}
}

// firstLoad records the outcome of a load of the admin policy sources: the first one marks
// the policies loaded, and a failure then (with no good admin set yet) fails every evaluation.
func (p *Policies) firstLoad(err error) {
	p.loadOnce.Do(func() {
		if err != nil {
			err = fmt.Errorf("%w, and no good admin policy set has been loaded since the manager started", err)
			p.failure.Store(&err)
		}
		close(p.loaded)
	})
}

// Engine is the policy set in service.
func (p *Policies) Engine() *engine.Engine { return p.current.Load() }

// Evaluate evaluates input with the policy set in service.
func (p *Policies) Evaluate(ctx context.Context, input map[string]any) *engine.Result {
	if failure := p.failure.Load(); failure != nil {
		return engine.Unavailable(p.Engine().Revision(), *failure)
	}
	start := time.Now()
	defer func() { evaluationSeconds.Observe(time.Since(start).Seconds()) }()
	return p.Engine().Evaluate(ctx, input)
}

// Swap puts e in service and asks for every gate to be re-evaluated.
func (p *Policies) Swap(e *engine.Engine) {
	p.current.Store(e)
	p.failure.Store(nil)
	select {
	case p.changed <- event.GenericEvent{}:
	default: // a re-evaluation is already queued
	}
}
