package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterCommands are the commands that read the cluster, each as a person would run it
// against the API server in front of them.
func clusterCommands(t *testing.T) [][]string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "site.rego"), []byte("package tollgate.site\n"), 0o644))
	return [][]string{
		{"status"},
		{"explain", "etcd", "-n", "team-a"},
		{"snapshot"},
		{"policy", "diff", "--policy-dir", dir},
	}
}

// An API server that completes TLS but never answers: every command gives up after
// --request-timeout (the message says 300ms, not the default) and says which server did not
// answer and which flag waits longer, whichever request ran out of time first (the discovery
// of the server's APIs, or a read).
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

	for _, args := range clusterCommands(t) {
		t.Run(args[0], func(t *testing.T) {
			_, _, err := run(t, append(args, "--server", srv.URL, "--insecure-skip-tls-verify", "--request-timeout", "300ms")...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the API server "+srv.URL+" did not answer within 300ms")
			assert.Contains(t, err.Error(), "--request-timeout")
		})
	}
}

// A server that is no Kubernetes API server (it answers 404 to everything, as a web server at
// the wrong address does): every command says so, and none takes it for a missing object.
func TestAServerThatIsNoAPIServerIsNamedAsSuch(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)

	for _, args := range clusterCommands(t) {
		t.Run(args[0], func(t *testing.T) {
			_, _, err := run(t, append(args, "--server", srv.URL, "--insecure-skip-tls-verify")...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), srv.URL+" is not a Kubernetes API server")
			assert.NotContains(t, err.Error(), "no Subscription")
		})
	}
}
