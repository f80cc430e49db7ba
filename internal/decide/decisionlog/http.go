package decisionlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Defaults of HTTPOptions.
const (
	DefaultUploadInterval = 10 * time.Second
	DefaultBatchEvents    = 500
	DefaultUploadBytes    = 1 << 20
	DefaultBufferEvents   = 10000
	DefaultMinBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff     = time.Minute
	DefaultFlushTimeout   = 10 * time.Second
)

// HTTPOptions configure an HTTPSink; zero fields take the defaults above.
type HTTPOptions struct {
	// Client sends the uploads; nil means a client with a 30 s timeout.
	Client *http.Client
	// Interval is how often pending events are uploaded.
	Interval time.Duration
	// BatchEvents uploads at once when this many events are pending, and caps a request.
	BatchEvents int
	// UploadBytes caps a request's uncompressed JSON array (OPA's upload_size_limit_bytes
	// counts compressed bytes; this bound is simpler and stricter). A larger event goes alone.
	UploadBytes int
	// BufferEvents bounds the pending events; when full the oldest is dropped and counted.
	BufferEvents int
	// MinBackoff and MaxBackoff bound the exponential wait after a failed upload.
	MinBackoff, MaxBackoff time.Duration
	// FlushTimeout bounds the last upload, when the sink stops.
	FlushTimeout time.Duration
	// Log receives upload failures; the zero value means ctrl.Log.WithName("decision-log").
	Log logr.Logger
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Interval, DefaultUploadInterval)
	def(&o.MinBackoff, DefaultMinBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.FlushTimeout, DefaultFlushTimeout)
	if o.BatchEvents <= 0 {
		o.BatchEvents = DefaultBatchEvents
	}
	if o.UploadBytes <= 0 {
		o.UploadBytes = DefaultUploadBytes
	}
	if o.BufferEvents <= 0 {
		o.BufferEvents = DefaultBufferEvents
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrl.Log.WithName("decision-log")
	}
	return o
}

// HTTPSink uploads events as OPA's decision log plugin does: POST of a gzip-compressed JSON
// array (Content-Encoding: gzip, Content-Type: application/json). Write only enqueues; Run
// uploads every Interval, or as soon as BatchEvents are pending, and retries a failed upload
// (a network error or a status other than 2xx) with an exponential backoff.
type HTTPSink struct {
	url  string
	name string // url without credentials, for messages
	opts HTTPOptions

	mu      sync.Mutex
	pending [][]byte // encoded events, oldest first
	stopped bool     // Run has ended: Write refuses events
	full    chan struct{}
}

// NewHTTPSink uploads to target: the URL as given when it has a path, else its /logs (OPA's
// default resource).
func NewHTTPSink(target string, opts HTTPOptions) (*HTTPSink, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("decision log %q: not an http(s) URL", target)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/logs"
	}
	return &HTTPSink{url: u.String(), name: u.Redacted(), opts: opts.withDefaults(), full: make(chan struct{}, 1)}, nil
}

// Write enqueues ev, dropping the oldest pending event when the buffer is full. Once Run has
// ended it refuses ev, counted as dropped (ErrClosed): nothing would upload it.
func (s *HTTPSink) Write(ev *Event) error {
	line, err := encode(ev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		droppedTotal.Inc()
		return fmt.Errorf("upload to %s: %w", s.name, ErrClosed)
	}
	s.enqueue(line)
	if len(s.pending) >= s.opts.BatchEvents {
		select {
		case s.full <- struct{}{}:
		default:
		}
	}
	return nil
}

// enqueue appends events, dropping the oldest beyond the bound; s.mu is held.
func (s *HTTPSink) enqueue(events ...[]byte) {
	s.pending = append(s.pending, events...)
	if over := len(s.pending) - s.opts.BufferEvents; over > 0 {
		droppedTotal.Add(float64(over))
		s.pending = append(s.pending[:0:0], s.pending[over:]...)
	}
}

// Pending is how many events wait for upload.
func (s *HTTPSink) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Run uploads until ctx ends, then uploads what is pending once (within FlushTimeout); what
// still fails is dropped, counted and logged with its number, and what is written after
// that is refused and counted (Write). An upload in flight when ctx ends is not cut off (the
// client's Timeout bounds it): the service may have taken the batch already, and flush would
// send it again.
func (s *HTTPSink) Run(ctx context.Context) error {
	uploads := context.WithoutCancel(ctx)
	tick := time.NewTicker(s.opts.Interval)
	defer tick.Stop()
	var retry <-chan time.Time // set while backing off
	failures := 0
	for {
		select {
		case <-ctx.Done():
			s.flush()
			return nil
		case <-tick.C:
		case <-s.full:
		case <-retry:
			retry = nil
		}
		if retry != nil {
			continue
		}
		if err := s.uploadAll(uploads); err != nil {
			failures++
			wait := s.backoff(failures)
			s.opts.Log.Error(err, "decision log upload failed; retrying", "in", wait, "pending", s.Pending())
			retry = time.After(wait)
			continue
		}
		failures = 0
	}
}

// backoff is MinBackoff doubled for each failure after the first, at most MaxBackoff.
func (s *HTTPSink) backoff(failures int) time.Duration {
	d := s.opts.MinBackoff
	for i := 1; i < failures && d < s.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.opts.MaxBackoff)
}

// flush is the last upload: until nothing is pending, also what was written meanwhile, then
// the sink refuses events. What it could not upload is dropped, counted and logged.
func (s *HTTPSink) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.FlushTimeout)
	defer cancel()
	err := s.uploadAll(ctx)
	s.mu.Lock()
	for err == nil && len(s.pending) > 0 { // written during the upload
		s.mu.Unlock()
		err = s.uploadAll(ctx)
		s.mu.Lock()
	}
	lost := len(s.pending)
	s.pending, s.stopped = nil, true
	s.mu.Unlock()
	if lost > 0 {
		droppedTotal.Add(float64(lost))
		s.opts.Log.Error(err, "decision log events lost on shutdown", "dropped", lost)
	}
}

// uploadAll uploads batches until none is pending; a failed batch goes back to the front.
func (s *HTTPSink) uploadAll(ctx context.Context) error {
	for {
		batch := s.take()
		if len(batch) == 0 {
			return nil
		}
		if err := s.upload(ctx, batch); err != nil {
			uploadErrorsTotal.Inc()
			s.mu.Lock()
			rest := s.pending
			s.pending = nil
			s.enqueue(append(batch, rest...)...)
			s.mu.Unlock()
			return err
		}
	}
}

// take removes the next batch from the buffer: at most BatchEvents events and UploadBytes
// bytes, but always at least one event.
func (s *HTTPSink) take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, size := 0, 0
	for n < len(s.pending) && n < s.opts.BatchEvents {
		if n > 0 && size+len(s.pending[n])+1 > s.opts.UploadBytes {
			break
		}
		size += len(s.pending[n]) + 1
		n++
	}
	batch := s.pending[:n:n]
	s.pending = s.pending[n:]
	return batch
}

// upload POSTs one batch.
func (s *HTTPSink) upload(ctx context.Context, batch [][]byte) error {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	_, _ = zw.Write([]byte{'['})
	for i, ev := range batch {
		if i > 0 {
			_, _ = zw.Write([]byte{','})
		}
		_, _ = zw.Write(bytes.TrimRight(ev, "\n"))
	}
	_, _ = zw.Write([]byte{']'})
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, &body)
	if err != nil {
		return fmt.Errorf("upload to %s: %w", s.name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("upload %d events: %w", len(batch), err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("upload %d events to %s: %s", len(batch), s.name, resp.Status)
	}
	return nil
}
