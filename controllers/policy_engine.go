package controllers

import (
	"context"
	"errors"
	"net/http"
	"runtime"
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
// embedded policies alone. If part of that first load fails, there is no good version of it
// to fall back to, and every evaluation is a PolicyError denial until it compiles (or is
// removed): the policy reconciler says so with serve.
type Policies struct {
	current atomic.Pointer[engine.Engine]
	changed chan event.GenericEvent
	// extensions learns of a change too, for the ExtensionGates.
	extensions chan event.GenericEvent

	loaded   chan struct{}
	loadOnce sync.Once
	failure  atomic.Pointer[error] // set while part of the admin policy has never compiled

	evaluators *evaluators
}

// NewPolicies serves e until a new set is swapped in.
func NewPolicies(e *engine.Engine) *Policies {
	p := &Policies{changed: make(chan event.GenericEvent, 1), extensions: make(chan event.GenericEvent, 1), loaded: make(chan struct{}),
		evaluators: &evaluators{n: runtime.GOMAXPROCS(0)}}
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

// errPoliciesNotLoaded is what /readyz says until the first load of the admin policy was tried.
var errPoliciesNotLoaded = errors.New("the admin policy sources are not loaded yet")

// Ready is a healthz.Checker that fails until the first load of the admin policy sources was
// tried, so the leader is not ready while its gates wait (see AddHealthChecks).
func (p *Policies) Ready(*http.Request) error {
	if !p.Loaded() {
		return errPoliciesNotLoaded
	}
	return nil
}

// serve puts e in service when it is not nil and sets the failure that fails every evaluation
// closed (nil: none). The first call marks the policies loaded. Every gate is re-evaluated
// when the set in service or the failure changed.
func (p *Policies) serve(e *engine.Engine, failure error) {
	changed := false
	if e != nil && e != p.current.Load() {
		p.current.Store(e)
		changed = true
	}
	old := p.failure.Load()
	switch {
	case failure == nil && old != nil:
		p.failure.Store(nil)
		changed = true
	case failure != nil && (old == nil || (*old).Error() != failure.Error()):
		p.failure.Store(&failure)
		changed = true
	}
	p.loadOnce.Do(func() { close(p.loaded) })
	if changed {
		p.notify()
	}
}

// Engine is the policy set in service.
func (p *Policies) Engine() *engine.Engine { return p.current.Load() }

// Revision is the revision of the policy set in service, and whether it evaluates (false
// while a failure stands: every evaluation is then a PolicyError).
func (p *Policies) Revision() (string, bool) {
	return p.Engine().Revision(), p.failure.Load() == nil
}

// Evaluate evaluates input with the policy set in service.
func (p *Policies) Evaluate(ctx context.Context, input map[string]any) *engine.Result {
	if failure := p.failure.Load(); failure != nil {
		return engine.Unavailable(p.Engine().Revision(), *failure)
	}
	e := p.Engine()
	var r *engine.Result
	p.evaluators.run(func() {
		start := time.Now()
		r = e.Evaluate(ctx, input)
		evaluationSeconds.Observe(time.Since(start).Seconds())
	})
	return r
}

// Swap puts e in service, clears any failure, and asks for every gate to be re-evaluated.
func (p *Policies) Swap(e *engine.Engine) {
	p.current.Store(e)
	p.failure.Store(nil)
	p.notify()
}

func (p *Policies) notify() {
	for _, c := range []chan event.GenericEvent{p.changed, p.extensions} {
		select {
		case c <- event.GenericEvent{}:
		default: // a re-evaluation is already queued
		}
	}
}
