package kubeconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNotAPIServer says the server the cluster flags name answered as no Kubernetes API server
// does: a 404 that is not a Kubernetes Status, typically to the discovery of its APIs.
var ErrNotAPIServer = errors.New("not a Kubernetes API server")

// noAnswer is the phrase of an error that says which server did not answer in time.
const noAnswer = "did not answer within"

// server names the API server the cluster flags reach, to say what went wrong with it.
type server struct {
	host    string
	timeout time.Duration // --request-timeout; 0: none
}

// explain says what err, an answer of the server or its absence, means to the person running
// the command: a request that ran out of --request-timeout names the server, the timeout and
// the flag, wherever the timeout surfaced (a request, the discovery of the server's APIs,
// wrapped or only quoted in an aggregated message); a server that answers 404 as no Kubernetes
// API server does is named as such, and that error is no NotFound, so that no caller takes it
// for a missing object. Other errors are returned as they are.
func (s server) explain(err error) error {
	switch {
	case err == nil || strings.Contains(err.Error(), noAnswer):
		return err
	case s.timeout > 0 && isTimeout(err):
		return s.timedOut(err)
	case notAPIServer(err):
		cause, _ := apierrors.StatusCause(err, metav1.CauseTypeUnexpectedServerResponse)
		return fmt.Errorf("%s is %w: it answered HTTP 404 %q, not a Kubernetes Status (is --server, or the kubeconfig context's cluster, the right address?)",
			s.host, ErrNotAPIServer, cause.Message)
	}
	return err
}

// timedOut is err said as the timeout of a request to the server.
func (s server) timedOut(err error) error {
	return fmt.Errorf("the API server %s %s %s (give --request-timeout a longer duration, or 0 to wait forever): %w", s.host, noAnswer, s.timeout, err)
}

// isTimeout says whether err is a request that ran out of time: a context deadline, a
// network timeout, or an error whose message only quotes one, as the discovery of the
// server's APIs aggregates the errors of its groups into one message.
func isTimeout(err error) bool {
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	msg := err.Error()
	for _, quoted := range []string{"Client.Timeout exceeded", context.DeadlineExceeded.Error(), "i/o timeout", "TLS handshake timeout"} {
		if strings.Contains(msg, quoted) {
			return true
		}
	}
	return false
}

// notAPIServer says whether err is a 404 whose body is no Kubernetes Status: client-go marks
// such an answer with the cause UnexpectedServerResponse. A Kubernetes API server answers
// every 404 with a Status, also for a resource it does not serve.
func notAPIServer(err error) bool {
	return apierrors.IsNotFound(err) && apierrors.HasStatusCause(err, metav1.CauseTypeUnexpectedServerResponse)
}

// timedOutRequest says whether a request that failed ran out of time: its context ended by
// its deadline, or the deadline has passed (http.Client's own timer cancels the request at
// the client's deadline, and the context then says only that it was canceled), or the request
// took the whole timeout.
func timedOutRequest(ctx context.Context, start time.Time, timeout time.Duration) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return true
	}
	return timeout > 0 && time.Since(start) >= timeout
}

// explaining is a client whose errors say what they mean (server.explain).
type explaining struct {
	client.Client
	server server
}

// Get reads obj, explaining the error.
func (c explaining) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.server.explain(c.Client.Get(ctx, key, obj, opts...))
}

// List reads list, explaining the error.
func (c explaining) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.server.explain(c.Client.List(ctx, list, opts...))
}

// Create creates obj, explaining the error.
func (c explaining) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.server.explain(c.Client.Create(ctx, obj, opts...))
}

// Update updates obj, explaining the error.
func (c explaining) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.server.explain(c.Client.Update(ctx, obj, opts...))
}

// Patch patches obj, explaining the error.
func (c explaining) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.server.explain(c.Client.Patch(ctx, obj, patch, opts...))
}

// Delete deletes obj, explaining the error.
func (c explaining) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.server.explain(c.Client.Delete(ctx, obj, opts...))
}
