package decisionlog_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// started runs log as the manager does until the returned stop is called; stop returns
// what Start returned, once it has.
func started(t *testing.T, log *decisionlog.Logger) (stop func() <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- log.Start(ctx) }()
	t.Cleanup(cancel)
	return func() <-chan error { cancel(); return done }
}

// closing waits until log refuses holds, which it does from the moment it is stopped.
func closing(t *testing.T, log *decisionlog.Logger) {
	t.Helper()
	require.Eventually(t, func() bool {
		release, ok := log.Hold()
		if ok {
			release()
		}
		return !ok
	}, 30*time.Second, time.Millisecond, "the stopped logger refuses new approvals")
}

func approvedPlan() *v1alpha1.InstallPlan {
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "install-etcd-v0-9-4"}}
	plan.Spec.ClusterServiceVersionNames = []string{"etcd.v0.9.4"}
	return plan
}

// TestAnApprovalUnderWayKeepsTheFileOpenUntilItIsLogged: the manager stops the logger while
// an approval holds it; the logger refuses new approvals at once, but closes the file only
// once the approval under way is logged, and then refuses (and counts) what comes after.
func TestAnApprovalUnderWayKeepsTheFileOpenUntilItIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
	require.NoError(t, err)
	var refused []string
	log := decisionlog.New(sink, decisionlog.Options{Log: funcr.New(func(_, args string) { refused = append(refused, args) }, funcr.Options{})})
	stop := started(t, log)

	release, ok := log.Hold()
	require.True(t, ok, "a running logger takes approvals")
	stopped := stop()
	closing(t, log)
	select {
	case <-stopped:
		t.Fatal("the logger stopped while an approval held it")
	default:
	}
	dec := heldDecision()
	dec.Result.Decision = engine.Decision{Allowed: true}
	log.Approval(dec, approvedPlan())
	release()
	require.NoError(t, <-stopped)

	dropped := counter(t, "tollgate_decision_log_dropped_total")
	log.Decision(heldDecision())
	assert.Equal(t, dropped+1, counter(t, "tollgate_decision_log_dropped_total"), "an event after the close is counted")
	require.Len(t, refused, 1, "and said")
	assert.Contains(t, refused[0], decisionlog.ErrClosed.Error())

	logged, err := decisionlog.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, logged, 1)
	assert.Equal(t, decisionlog.PathApproval, logged[0].Event.Path, "the approval under way is in the file")
}

// TestANilLoggerHoldsNothing: without a decision log, approvals are never refused.
func TestANilLoggerHoldsNothing(t *testing.T) {
	var log *decisionlog.Logger
	release, ok := log.Hold()
	assert.True(t, ok)
	release()
}

// TestHTTPSinkRefusesAndCountsWhatComesAfterItStopped: an event written once the sink has
// made its last upload would never be uploaded; it is refused and counted, not kept.
func TestHTTPSinkRefusesAndCountsWhatComesAfterItStopped(t *testing.T) {
	c, url := serve(t, 0)
	sink := httpSink(t, url, decisionlog.HTTPOptions{Interval: time.Hour})
	log := newLogger(sink, false)
	log.Decision(heldDecision())
	running(t, sink)()
	require.Equal(t, 1, c.events(), "what was pending is uploaded on stop")

	dropped := counter(t, "tollgate_decision_log_dropped_total")
	err := sink.Write(&decisionlog.Event{DecisionID: "late", Path: decisionlog.PathDecision})
	assert.ErrorIs(t, err, decisionlog.ErrClosed)
	assert.Zero(t, sink.Pending())
	assert.Equal(t, dropped+1, counter(t, "tollgate_decision_log_dropped_total"))
}
