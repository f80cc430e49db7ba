package decisionlog_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// TestALoggedDecisionReplaysToTheSameResult decides real snapshots with the embedded
// policies, logs the decisions and the approval, reads the log back and evaluates each
// logged input again: the same decision comes out, to the last denial.
func TestALoggedDecisionReplaysToTheSameResult(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	log := newLogger(decisionlog.NewWriterSink(&buf), false)
	snapshots := repo.Path("test", "testdata", "snapshots")
	decided := map[string]engine.Decision{}
	for _, tt := range []struct {
		file string
		key  types.NamespacedName
	}{
		{"held.yaml", types.NamespacedName{Namespace: "team-a", Name: "etcd"}},
		{"allowed.yaml", types.NamespacedName{Namespace: "team-b", Name: "etcd"}},
	} {
		snap, err := snapshot.Load(filepath.Join(snapshots, tt.file))
		require.NoError(t, err)
		var sub v1alpha1.Subscription
		require.NoError(t, snap.Get(ctx, tt.key, &sub))
		require.NoError(t, snap.Add(gatestatus.New(&sub)), "the gate the manager creates")
		d := &approval.Decider{Reader: snap, Policies: eng, Now: func() time.Time { return now }}
		dec, err := d.Decide(ctx, tt.key)
		require.NoError(t, err)
		require.NotNil(t, dec)
		log.Decision(dec)
		decided[tt.key.String()] = dec.Result.Decision
		for i, v := range dec.Plans {
			if v.Approvable {
				log.Approval(dec, &dec.PendingInstallPlans[i])
			}
		}
	}
	require.False(t, decided["team-a/etcd"].Allowed, "the held snapshot is held")
	require.True(t, decided["team-b/etcd"].Allowed, "the allowed snapshot is allowed")

	logged, err := decisionlog.Read(&buf)
	require.NoError(t, err)
	require.Equal(t, 3, len(logged), "two decisions and one approval")
	assert.Equal(t, decisionlog.PathApproval, logged[2].Event.Path)
	for _, l := range logged {
		require.NotNil(t, l.Decision, "line %d has result.decision", l.Line)
		sub := l.Event.Input["subscription"].(map[string]any)["metadata"].(map[string]any)
		key := sub["namespace"].(string) + "/" + sub["name"].(string)
		assert.Equal(t, decided[key], *l.Decision, "%s: the logged decision is the decision", key)
		replayed := eng.Evaluate(ctx, l.Event.Input)
		require.NoError(t, replayed.Err)
		assert.Equal(t, *l.Decision, replayed.Decision, "%s (%s): the logged input decides the same", key, l.Event.Path)
		assert.Equal(t, l.Event.InputDigest, engine.Digest(l.Event.Input), "the input read back has the logged digest")
	}
}
