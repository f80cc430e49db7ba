package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/approval"
	"github.com/tollgate-dev/tollgate/decisionlog"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/input"
)

// TestReplayOfEventsWithoutInput: an event logged with --decision-log-input=false is
// reported, not replayed, and is no difference.
func TestReplayOfEventsWithoutInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
	require.NoError(t, err)
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "etcd"}}
	dec := &approval.Decision{
		Document: &input.Document{Doc: map[string]any{"now": "2026-11-20T12:00:00Z"}, Subscription: sub},
		Result:   &engine.Result{Revision: "0123456789ab", Decision: engine.Decision{Allowed: true}},
	}
	decisionlog.New(sink, decisionlog.Options{OmitInput: true, Log: logr.Discard()}).Decision(dec)

	stdout, _, err := run(t, "eval", "--replay", path, "-o", "json")
	require.NoError(t, err)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Events, 1)
	assert.Equal(t, 1, rep.NotReplayable)
	assert.Equal(t, "logged without input", rep.Events[0].Reason)

	table, _, err := run(t, "eval", "--replay", path)
	require.NoError(t, err)
	assert.Contains(t, table, "not replayable (logged without input)")

	_, _, err = run(t, "eval", "--replay", path, "--snapshot", path)
	assert.ErrorContains(t, err, "takes no --snapshot")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o600))
	_, _, err = run(t, "eval", "--replay", path)
	assert.ErrorContains(t, err, "line 1")
}

// TestReplayEscapesWhatTheLogSays: a decision log is input like any other; a name carrying
// a terminal escape sequence is printed escaped.
func TestReplayEscapesWhatTheLogSays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
	require.NoError(t, err)
	sub := map[string]any{"metadata": map[string]any{"namespace": "demo", "name": "etcd\x1b]0;pwned\a"}}
	dec := &approval.Decision{
		Document: &input.Document{Doc: map[string]any{"now": "2026-11-20T12:00:00Z", "subscription": sub}, Subscription: &v1alpha1.Subscription{}},
		Result:   &engine.Result{Revision: "0123456789ab", Decision: engine.Decision{Allowed: true}},
	}
	decisionlog.New(sink, decisionlog.Options{Log: logr.Discard()}).Decision(dec)

	table, _, err := run(t, "eval", "--replay", path)
	require.ErrorContains(t, err, "come out differently") // the logged input is not a whole document
	assert.Contains(t, table, "demo/etcd")
	assert.NotContains(t, table, "\x1b", "an escape sequence from the log reaches the terminal")
}

// TestReplayNamesALineLongerThanTheCap: a line past the decision log's cap is named, with
// the cap, rather than reported as a scanner's token.
func TestReplayNamesALineLongerThanTheCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
	require.NoError(t, err)
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "etcd"}}
	dec := &approval.Decision{
		Document: &input.Document{Doc: map[string]any{"now": "2026-11-20T12:00:00Z"}, Subscription: sub},
		Result:   &engine.Result{Revision: "0123456789ab", Decision: engine.Decision{Allowed: true}},
	}
	decisionlog.New(sink, decisionlog.Options{Log: logr.Discard()}).Decision(dec)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, fi.Size()+decisionlog.MaxLine)) // line 2: sparse, never written

	_, _, err = run(t, "eval", "--replay", path)
	require.Error(t, err)
	assert.Equal(t, "--replay "+path+": line 2: longer than the cap of 64 MiB", err.Error())
}
