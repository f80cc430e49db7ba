package decisionlog_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// collector is a decision log service: it records the batches it accepts, and fails the
// first failures requests with 500. With hold set, it answers a batch it accepted only once
// hold is closed.
type collector struct {
	t        *testing.T
	hold     chan struct{}
	mu       sync.Mutex
	failures int
	requests int
	batches  [][]map[string]any
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	assert.Equal(c.t, http.MethodPost, r.Method)
	assert.Equal(c.t, "/logs", r.URL.Path, "OPA's default resource")
	assert.Equal(c.t, "gzip", r.Header.Get("Content-Encoding"))
	assert.Equal(c.t, "application/json", r.Header.Get("Content-Type"))
	zr, err := gzip.NewReader(r.Body)
	if !assert.NoError(c.t, err) {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var batch []map[string]any
	if !assert.NoError(c.t, json.NewDecoder(zr).Decode(&batch), "a JSON array of events") {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if c.failures > 0 {
		c.failures--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	c.batches = append(c.batches, batch)
	if c.hold != nil {
		c.mu.Unlock()
		<-c.hold
		c.mu.Lock()
	}
}

func (c *collector) events() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, b := range c.batches {
		n += len(b)
	}
	return n
}

func serve(t *testing.T, failures int) (*collector, string) {
	c := &collector{t: t, failures: failures}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func httpSink(t *testing.T, url string, opts decisionlog.HTTPOptions) *decisionlog.HTTPSink {
	opts.Log = logr.Discard()
	s, err := decisionlog.NewHTTPSink(url, opts)
	require.NoError(t, err)
	return s
}

// running runs s until the test ends, and returns the function that stops it and waits.
func running(t *testing.T, s decisionlog.Sink) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the sink did not stop")
		}
	}
	t.Cleanup(func() { cancel() })
	return stop
}

func TestHTTPSinkUploadsFullBatchesAtOnce(t *testing.T) {
	c, url := serve(t, 0)
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: time.Hour, BatchEvents: 3})
	stop := running(t, sink)
	log := newLogger(sink, false)
	for range 7 {
		log.Decision(heldDecision())
	}
	// Which events make a full batch depends on how the writes and the uploads interleave;
	// what holds in every order is that no full batch waits for the interval.
	require.Eventually(t, func() bool { return sink.Pending() < 3 && c.events()+sink.Pending() == 7 }, 30*time.Second, 10*time.Millisecond,
		"full batches go without waiting for the interval")
	stop()
	assert.Equal(t, 7, c.events(), "what is left is flushed on stop")
	c.mu.Lock()
	for _, b := range c.batches {
		assert.LessOrEqual(t, len(b), 3, "a request holds one batch at most")
	}
	assert.Equal(t, "tollgate/main/result", c.batches[0][0]["path"])
	c.mu.Unlock()
	assert.Zero(t, sink.Pending())
}

// TestHTTPSinkFinishesTheUploadInFlightAtShutdown: a batch the service has taken is not sent
// again because the manager stopped before the answer came.
func TestHTTPSinkFinishesTheUploadInFlightAtShutdown(t *testing.T) {
	c, url := serve(t, 0)
	c.hold = make(chan struct{})
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: time.Hour, BatchEvents: 1})
	stop := running(t, sink)
	newLogger(sink, false).Decision(heldDecision())
	require.Eventually(t, func() bool { return c.events() == 1 }, 5*time.Second, 10*time.Millisecond, "the batch reached the service")
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	time.Sleep(100 * time.Millisecond) // the stop is under way while the answer is held
	close(c.hold)
	<-stopped
	assert.Equal(t, 1, c.events(), "the batch was uploaded once")
	assert.Zero(t, sink.Pending())
}

func TestHTTPSinkRetriesAfterAFailure(t *testing.T) {
	c, url := serve(t, 2)
	errorsBefore := counter(t, "tollgate_decision_log_upload_errors_total")
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: 20 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	stop := running(t, sink)
	log := newLogger(sink, false)
	log.Decision(heldDecision())
	log.Decision(heldDecision())
	require.Eventually(t, func() bool { return c.events() == 2 }, 5*time.Second, 10*time.Millisecond)
	stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Equal(t, 3, c.requests, "two answered 500, the third was accepted")
	assert.Len(t, c.batches, 1, "the failed batch is sent again whole, once accepted")
	assert.Equal(t, errorsBefore+2, counter(t, "tollgate_decision_log_upload_errors_total"))
}

func TestHTTPSinkBufferIsBounded(t *testing.T) {
	c, url := serve(t, 0)
	before := counter(t, "tollgate_decision_log_dropped_total")
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: time.Hour, BufferEvents: 5, BatchEvents: 100})
	log := newLogger(sink, false)
	for range 8 {
		log.Decision(heldDecision())
	}
	assert.Equal(t, 5, sink.Pending())
	assert.Equal(t, before+3, counter(t, "tollgate_decision_log_dropped_total"), "the oldest three were dropped")
	running(t, sink)()
	assert.Equal(t, 5, c.events())
}

func TestHTTPSinkCountsWhatItCannotFlushOnStop(t *testing.T) {
	c, url := serve(t, 1000)
	before := counter(t, "tollgate_decision_log_dropped_total")
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: time.Hour, FlushTimeout: time.Second})
	newLogger(sink, false).Decision(heldDecision())
	running(t, sink)()
	assert.Zero(t, c.events())
	assert.Zero(t, sink.Pending())
	assert.Equal(t, before+1, counter(t, "tollgate_decision_log_dropped_total"))
}

func TestHTTPSinkSplitsLargeBatches(t *testing.T) {
	c, url := serve(t, 0)
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: time.Hour, UploadBytes: 1500})
	log := newLogger(sink, false)
	for range 4 {
		log.Decision(heldDecision()) // about 900 bytes each
	}
	running(t, sink)()
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Len(t, c.batches, 4, "one event per request under the byte bound")
}

func TestHTTPSinkURL(t *testing.T) {
	_, err := decisionlog.NewHTTPSink("ftp://example.com", decisionlog.HTTPOptions{})
	assert.Error(t, err)
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { path = r.URL.Path }))
	defer srv.Close()
	sink := httpSink(t, srv.URL+"/v1/decisions", decisionlog.HTTPOptions{Interval: time.Hour})
	newLogger(sink, false).Decision(heldDecision())
	running(t, sink)()
	assert.Equal(t, "/v1/decisions", path, "a URL with a path is used as it is")
}

// counter reads a counter of the controller-runtime registry.
func counter(t *testing.T, name string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
