package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
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
	var rep replay.Report
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

// TestReplayFlagsAnEditedInput: an event whose input is not the one its digests were taken
// of, its clock included, is a difference, exit status 3 (package replay tests its outcome
// and reason).
func TestReplayFlagsAnEditedInput(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	doc := map[string]any{"now": "2026-11-20T12:00:00Z", "subscription": map[string]any{"metadata": map[string]any{"namespace": "demo", "name": "etcd"}}}
	res := eng.Evaluate(ctx, doc)
	var buf bytes.Buffer
	log := decisionlog.New(decisionlog.NewWriterSink(&buf), decisionlog.Options{Log: logr.Discard()})
	for range 4 {
		log.Decision(&approval.Decision{Document: &input.Document{Doc: doc, Subscription: &v1alpha1.Subscription{}}, Result: res})
	}
	lines := strings.SplitAfter(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 4)
	edit := func(line string, change func(ev map[string]any)) string {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		change(ev)
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		return string(b) + "\n"
	}
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600))
		return p
	}
	untouched := write("untouched.log", lines[0])
	edited := write("edited.log",
		lines[0],
		edit(lines[1], func(ev map[string]any) {
			ev["input"].(map[string]any)["subscription"].(map[string]any)["metadata"].(map[string]any)["name"] = "other"
		}),
		edit(lines[2], func(ev map[string]any) { delete(ev, "input_digest") }),
		edit(lines[3], func(ev map[string]any) { ev["input"].(map[string]any)["now"] = "2027-01-01T00:00:00Z" }))

	t.Run("an untouched event replays the same", func(t *testing.T) {
		stdout, _, err := run(t, "eval", "--replay", untouched)
		require.NoError(t, err)
		assert.Contains(t, stdout, " same\n")
		assert.Contains(t, stdout, ": 1 same, 0 different, 0 not replayable\n", "the summary says nothing of edited inputs when there are none")
	})
	t.Run("edited events are a difference: exit status 3, in JSON", func(t *testing.T) {
		stdout, _, err := run(t, "eval", "--replay", edited, "-o", "json")
		require.Error(t, err)
		assert.Equal(t, exitDenied, exitCode(err))
		assert.Equal(t, "3 of 4 logged inputs are not the ones their digests were taken of", err.Error())
		var rep replay.Report
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		assert.Equal(t, 3, rep.InputEdited)
		assert.Contains(t, rep.Events[3].Reason, "clock (now)", "an edited clock is seen")
	})
	t.Run("edited events are their own outcome, in the table", func(t *testing.T) {
		stdout, _, err := run(t, "eval", "--replay", edited)
		require.Error(t, err)
		assert.Equal(t, exitDenied, exitCode(err))
		assert.Contains(t, stdout, "INPUT EDITED (digest mismatch)")
		assert.Contains(t, stdout, "INPUT EDITED (no input_digest)")
		assert.Contains(t, stdout, ": 1 same, 0 different, 0 not replayable, 3 input edited\n")
	})
}
