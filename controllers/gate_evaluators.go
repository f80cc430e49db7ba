package controllers

import "sync"

// evaluators run evaluations on a few goroutines of their own, one per CPU. An evaluation is
// CPU work, and the reconcile workers are many because they mostly wait on the API server:
// run on the workers, more evaluations would run at once than there are CPUs, none finishing
// sooner, each holding its working memory; and OPA's recursive evaluation grows the stack of
// every goroutine that evaluates, which keeps it until the collector shrinks it (at 5,000
// Subscriptions, 157 goroutines held 27 MiB of stacks, most of it the 16 workers').
type evaluators struct {
	n     int
	start sync.Once
	jobs  chan func()
}

// run runs job on one of the evaluators, once one is free, and returns when it is done.
func (e *evaluators) run(job func()) {
	e.start.Do(func() {
		e.jobs = make(chan func())
		for range max(e.n, 1) {
			go func() {
				for job := range e.jobs {
					job()
				}
			}()
		}
	})
	done := make(chan struct{})
	e.jobs <- func() {
		defer close(done)
		job()
	}
	<-done
}
