package controllers

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEvaluationsRunNoMoreAtOnceThanThereAreEvaluators(t *testing.T) {
	e := &evaluators{n: 2}
	var running, most, finished atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.run(func() {
				now := running.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				time.Sleep(10 * time.Millisecond)
				running.Add(-1)
				finished.Add(1)
			})
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(10), finished.Load(), "run returns once its job is done")
	assert.Equal(t, int32(2), most.Load(), "two evaluators: two at once, no more, no less")
}
