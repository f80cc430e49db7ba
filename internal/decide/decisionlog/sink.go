package decisionlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// ErrClosed is what a sink's Write returns once its Run has ended: the event is not logged,
// and it is counted in tollgate_decision_log_dropped_total.
var ErrClosed = errors.New("the decision log is closed")

// Open is the sink target names: "stdout", an http(s) URL (HTTPSink, with opts), or a file
// path, opened for appending (created with mode 0600).
func Open(target string, opts HTTPOptions) (Sink, error) {
	switch {
	case target == "":
		return nil, fmt.Errorf("no decision log target: use stdout, a file path or an http(s) URL")
	case target == "stdout" || target == "-":
		return NewWriterSink(os.Stdout), nil
	case strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://"):
		return NewHTTPSink(target, opts)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the decision log: %w", err)
	}
	return NewWriterSink(f), nil
}

// WriterSink writes one line per event to an io.Writer, each line in one Write under one
// lock, so lines never interleave. A file gets each event in one write to the file, so an
// event written outlives the process. A writer that is an io.Closer (other than standard
// output and error) is synced when it has a Sync method, and closed, when Run ends; Write
// then returns ErrClosed.
type WriterSink struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

// NewWriterSink writes to w.
func NewWriterSink(w io.Writer) *WriterSink { return &WriterSink{w: w} }

// Write writes ev as one line.
func (s *WriterSink) Write(ev *Event) error {
	line, err := encode(ev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		droppedTotal.Inc()
		return fmt.Errorf("write the decision log: %w", ErrClosed)
	}
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("write the decision log: %w", err)
	}
	return nil
}

// Run waits for ctx to end, then syncs and closes the writer unless it is standard output or
// error.
func (s *WriterSink) Run(ctx context.Context) error {
	<-ctx.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.w.(io.Closer)
	if !ok || s.w == os.Stdout || s.w == os.Stderr {
		return nil
	}
	s.closed = true
	var errs []error
	if f, ok := s.w.(interface{ Sync() error }); ok {
		errs = append(errs, f.Sync())
	}
	errs = append(errs, c.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close the decision log: %w", err)
	}
	return nil
}
