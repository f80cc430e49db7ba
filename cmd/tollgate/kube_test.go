package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An API server that completes TLS but never answers: the command gives up after
// --request-timeout and says which server did not answer and which flag waits longer.
func TestAServerThatNeverAnswersTimesOut(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	done := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: the handlers return, then the server closes

	for _, args := range [][]string{
		{"status"},
		{"explain", "etcd"},
		{"snapshot"},
	} {
		t.Run(args[0], func(t *testing.T) {
			start := time.Now()
			_, _, err := run(t, append(args, "--server", srv.URL, "--insecure-skip-tls-verify", "--request-timeout", "300ms")...)
			require.Error(t, err)
			assert.Less(t, time.Since(start), 20*time.Second, "bounded by --request-timeout, not hanging")
			assert.Contains(t, err.Error(), "the API server "+srv.URL+" did not answer within 300ms")
			assert.Contains(t, err.Error(), "--request-timeout")
		})
	}
}
