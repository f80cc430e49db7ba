package replay_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
)

func TestWriteTable(t *testing.T) {
	ctx := context.Background()
	edited := logged(allow())
	edited.Event.InputDigest = "not-the-digest"
	events := []decisionlog.Logged{logged(hold("OperatorNotUpgradeable")), without(logged(allow()), "input"), edited}
	rep := replay.Replay(ctx, fixed{engine.Result{Decision: hold("DenyAll", "OperatorNotUpgradeable")}}, events)

	t.Run("one row per event, reasons shortened, then the counts", func(t *testing.T) {
		var buf bytes.Buffer
		require.NoError(t, rep.WriteTable(&buf, printers.TableOptions{}))
		assert.Equal(t, `  DECISION ID                           PATH                  SUBSCRIPTION  LOGGED                        REPLAYED                               OUTCOME
  e242c304-812b-43c5-95f8-0ab841f398c7  tollgate/main/result  demo/etcd     held: OperatorNotUpgradeable  held: DenyAll, OperatorNotUpgradeable  DIFFERENT
  e242c304-812b-43c5-95f8-0ab841f398c7  tollgate/main/result  /             allowed                       -                                      not replayable (logged without input)
  e242c304-812b-43c5-95f8-0ab841f398c7  tollgate/main/result  demo/etcd     allowed                       held: DenyAll, OperatorNotUpgradeable  INPUT EDITED (digest mismatch)

3 events replayed with policy revision fedcba987654: 0 same, 1 different, 1 not replayable, 1 input edited
`, buf.String())
	})

	t.Run("no edited input: the summary does not mention them", func(t *testing.T) {
		var buf bytes.Buffer
		same := replay.Replay(ctx, fixed{engine.Result{Decision: allow()}}, []decisionlog.Logged{logged(allow())})
		require.NoError(t, same.WriteTable(&buf, printers.TableOptions{}))
		assert.Contains(t, buf.String(), " same\n")
		assert.Contains(t, buf.String(), "\n1 events replayed with policy revision fedcba987654: 1 same, 0 different, 0 not replayable\n")
	})

	t.Run("--no-headers prints the rows only", func(t *testing.T) {
		var buf bytes.Buffer
		require.NoError(t, rep.WriteTable(&buf, printers.TableOptions{NoHeaders: true}))
		assert.NotContains(t, buf.String(), "DECISION ID")
		assert.NotContains(t, buf.String(), "events replayed")
		assert.Equal(t, 3, bytes.Count(buf.Bytes(), []byte("\n")))
	})
}

// TestWriteTableEscapesWhatTheLogSays: a decision log is input like any other; a name
// carrying a terminal escape sequence is printed escaped.
func TestWriteTableEscapesWhatTheLogSays(t *testing.T) {
	l := logged(allow())
	l.Event.Input["subscription"] = map[string]any{"metadata": map[string]any{"namespace": "demo", "name": "etcd\x1b]0;pwned\a"}}
	l.Event.DecisionID = "id\x1b[2J"
	rep := replay.Replay(context.Background(), fixed{engine.Result{Decision: allow()}}, []decisionlog.Logged{l})
	rep.PolicyRevision = "rev\x1b[31m"
	var buf bytes.Buffer
	require.NoError(t, rep.WriteTable(&buf, printers.TableOptions{}))
	assert.Contains(t, buf.String(), "demo/etcd")
	assert.NotContains(t, buf.String(), "\x1b", "an escape sequence from the log reaches the terminal")
}
