package kubeconn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// netTimeout is a network error that timed out, as net.Conn deadlines report it.
type netTimeout struct{}

func (netTimeout) Error() string   { return "read tcp 10.0.0.1:443: i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

// TestErrorsSayWhatTheyMean: a timeout says the server, the timeout and the flag wherever it
// surfaced; a server that answers 404 as no API server does is named as such and is no
// NotFound; everything else is left as it is.
func TestErrorsSayWhatTheyMean(t *testing.T) {
	const host = "https://10.0.0.1:6443"
	clientTimeout := &url.Error{Op: "Get", URL: host + "/apis/operators.coreos.com/v1alpha1", Err: errors.New("net/http: request canceled (Client.Timeout exceeded while awaiting headers)")}
	notAServer := apierrors.NewGenericServerResponse(http.StatusNotFound, "GET", schema.GroupResource{}, "", "404 page not found", 0, true)
	missing := apierrors.NewNotFound(schema.GroupResource{Group: "operators.coreos.com", Resource: "subscriptions"}, "etcd")
	for _, tt := range []struct {
		scenario string
		timeout  time.Duration
		err      error
		says     string // "" when the error is left as it is
		notFound bool
	}{
		{"a timeout of the discovery, quoted in its aggregated message", 300 * time.Millisecond,
			fmt.Errorf("failed to get server groups: %w", &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{{Group: "operators.coreos.com", Version: "v1alpha1"}: clientTimeout}}),
			"the API server " + host + " did not answer within 300ms (give --request-timeout a longer duration, or 0 to wait forever): failed to get server groups: ", false},
		{"a url.Error of http.Client's timeout", 300 * time.Millisecond, clientTimeout, "did not answer within 300ms", false},
		{"a network timeout, wrapped", time.Second, fmt.Errorf("list subscriptions: %w", &url.Error{Op: "Get", URL: host, Err: netTimeout{}}), "did not answer within 1s", false},
		{"a context deadline, wrapped", time.Second, fmt.Errorf("rate limiter: %w", context.DeadlineExceeded), "did not answer within 1s", false},
		{"a timeout the transport explained already is said once", time.Second, errors.New("the API server " + host + " did not answer within 1s (give --request-timeout ...)"), "", false},
		{"without --request-timeout, a timeout is no timeout of the flag", 0, clientTimeout, "", false},
		{"a 404 that is no Kubernetes Status: not an API server, and no NotFound", time.Second, fmt.Errorf("failed to get server groups: %w", notAServer),
			host + ` is not a Kubernetes API server: it answered HTTP 404 "404 page not found", not a Kubernetes Status (is --server`, false},
		{"a NotFound of a real API server stays a NotFound", time.Second, missing, "", true},
		{"another error is left as it is", time.Second, errors.New("forbidden"), "", false},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			got := server{host: host, timeout: tt.timeout}.explain(tt.err)
			if tt.says == "" {
				assert.Equal(t, tt.err, got)
			} else {
				assert.Contains(t, got.Error(), tt.says)
			}
			assert.Equal(t, tt.notFound, apierrors.IsNotFound(got))
		})
	}
	assert.ErrorIs(t, server{host: host}.explain(notAServer), ErrNotAPIServer)
}

// failing is a transport whose request fails as canceled once its deadline has passed, as
// when http.Client's own timer cancels it: the context then says canceled, not deadline.
type failing struct{}

func (failing) RoundTrip(req *http.Request) (*http.Response, error) {
	deadline, _ := req.Context().Deadline()
	<-time.After(time.Until(deadline))
	return nil, context.Canceled
}

// TestARequestCanceledAtItsDeadlineIsATimeout: the request's context says canceled, but its
// deadline has passed: it ran out of time, whatever else was slow on a busy machine.
func TestARequestCanceledAtItsDeadlineIsATimeout(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(10*time.Millisecond))
	cancel() // canceled before its deadline: ctx.Err() is context.Canceled
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://10.0.0.1:6443/api", nil)
	require.NoError(t, err)
	hint := timeoutHint{next: failing{}, server: server{host: "https://10.0.0.1:6443", timeout: time.Hour}}
	_, err = hint.RoundTrip(req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not answer within 1h0m0s")
}
