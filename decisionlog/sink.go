package decisionlog

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

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
// lock, so lines never interleave. A writer that is an io.Closer is closed when Run ends.
type WriterSink struct {
	mu sync.Mutex
	w  io.Writer
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
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("write the decision log: %w", err)
	}
	return nil
}

// Run waits for ctx to end, then closes the writer unless it is standard output or error.
func (s *WriterSink) Run(ctx context.Context) error {
	<-ctx.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.w.(io.Closer)
	if !ok || s.w == os.Stdout || s.w == os.Stderr {
		return nil
	}
	s.w = io.Discard
	if err := c.Close(); err != nil {
		return fmt.Errorf("close the decision log: %w", err)
	}
	return nil
}
