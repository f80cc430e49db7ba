package kubeconn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// Every request has a deadline unless --request-timeout=0 says otherwise, as in kubectl.
func TestTheRequestTimeoutHasADefault(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	tests := []struct {
		scenario string
		args     []string
		want     time.Duration
	}{
		{"without the flag, 30s", nil, DefaultRequestTimeout},
		{"a duration given", []string{"--request-timeout", "5s"}, 5 * time.Second},
		{"0 given: no limit, as in kubectl", []string{"--request-timeout", "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			var f Flags
			cmd := &cobra.Command{Use: "x"}
			f.AddFlags(cmd)
			require.NoError(t, cmd.ParseFlags(append([]string{"--server", "https://api.example.invalid:6443"}, tt.args...)))
			cfg, err := f.RESTConfig()
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Timeout)
		})
	}
	assert.Equal(t, 30*time.Second, DefaultRequestTimeout)
}

// An API server that completes TLS but never answers: a read gives up after
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

	var f Flags
	cmd := &cobra.Command{Use: "x"}
	f.AddFlags(cmd)
	require.NoError(t, cmd.ParseFlags([]string{"--server", srv.URL, "--insecure-skip-tls-verify", "--request-timeout", "300ms", "-n", "team-a"}))
	assert.Equal(t, "team-a", f.Namespace())
	c, ns, cfg, err := f.Connect()
	require.NoError(t, err)
	assert.Equal(t, "team-a", ns)
	assert.Equal(t, srv.URL, cfg.Host)
	assert.Contains(t, cfg.UserAgent, "tollgate/")

	err = c.List(context.Background(), &corev1.NamespaceList{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the API server "+srv.URL+" did not answer within 300ms")
	assert.Contains(t, err.Error(), "--request-timeout")

	names, directive := f.CompleteNamespaces(cmd, nil, "")
	assert.Empty(t, names, "a completion has no place for an error: nothing is offered")
	assert.Equal(t, cobra.ShellCompDirectiveNoFileComp, directive)
}
