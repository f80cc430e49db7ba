package impact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/impact"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// holdTeamA is a candidate site rule that holds every upgrade in team-a, and nothing else.
const holdTeamA = `package tollgate.packs.site

# METADATA
# custom:
#   code: ChangeTicketMissing
deny contains {"code": rego.metadata.rule().custom.code, "message": "team-a needs a ticket"} if {
	input.subscription.metadata.namespace == "team-a"
}
`

// evaluators are the embedded policies and the candidate on the same snapshot, which holds
// team-a's upgrade (OperatorNotUpgradeable) and allows the others.
func evaluators(t *testing.T) (inForce, candidate *evaluation.Evaluator) {
	t.Helper()
	ctx := context.Background()
	dir := repo.Path("test", "testdata", "snapshots")
	snap, err := snapshot.Load(filepath.Join(dir, "held.yaml"), filepath.Join(dir, "allowed.yaml"))
	require.NoError(t, err)
	require.NoError(t, evaluation.EnsureGates(ctx, snap))
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	cfg := input.Config{GlobalCatalogNamespace: "olm"}
	before, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	after, err := engine.New(ctx, engine.Options{Modules: []engine.Module{{Path: "site.rego", Source: holdTeamA}}})
	require.NoError(t, err)
	var warn bytes.Buffer
	return evaluation.New(snap, before, cfg, now, &warn), evaluation.New(snap, after, cfg, now, &warn)
}

func TestCompareListsOnlyWhatChanges(t *testing.T) {
	inForce, candidate := evaluators(t)
	r, err := impact.Compare(context.Background(), inForce, candidate, "the snapshot")
	require.NoError(t, err)
	// team-a was held by OperatorNotUpgradeable and is now held by both codes; the allowed
	// Subscriptions elsewhere do not change.
	require.Len(t, r.Changes, 1)
	c := r.Changes[0]
	assert.Equal(t, "team-a/etcd", c.Namespace+"/"+c.Name)
	assert.Equal(t, impact.Verdict{Codes: []string{"OperatorNotUpgradeable"}}, c.Before)
	assert.Equal(t, impact.Verdict{Codes: []string{"ChangeTicketMissing", "OperatorNotUpgradeable"}}, c.After, "codes sorted")
	assert.Equal(t, 1, r.Summary.Changed)
	assert.Zero(t, r.Summary.NewlyBlocked+r.Summary.NewlyAllowed)
	assert.Positive(t, r.Summary.Unchanged)

	doc, err := json.Marshal(r)
	require.NoError(t, err)
	assert.NotContains(t, string(doc), "scope", "only the documented fields are the JSON contract")
}

func TestCompareTheOtherWayRound(t *testing.T) {
	inForce, candidate := evaluators(t)
	r, err := impact.Compare(context.Background(), candidate, inForce, "the snapshot")
	require.NoError(t, err)
	require.Len(t, r.Changes, 1)
	assert.Equal(t, []string{"ChangeTicketMissing", "OperatorNotUpgradeable"}, r.Changes[0].Before.Codes)
}

func TestNewlyBlockedAndTheirPlans(t *testing.T) {
	inForce, candidate := evaluators(t)
	inForce.Namespace, candidate.Namespace = "team-b", "team-b"
	ctx := context.Background()
	blockB, err := engine.New(ctx, engine.Options{Modules: []engine.Module{{Path: "site.rego", Source: `package tollgate.packs.site

# METADATA
# custom:
#   code: ChangeFreeze
deny contains {"code": rego.metadata.rule().custom.code, "message": "frozen"} if true
`}}})
	require.NoError(t, err)
	candidate.Engine, candidate.Decider.Policies = blockB, blockB
	r, err := impact.Compare(ctx, inForce, candidate, "namespace team-b")
	require.NoError(t, err)
	require.Len(t, r.Changes, 1)
	assert.Equal(t, impact.Summary{NewlyBlocked: 1}, r.Summary)
	assert.Equal(t, "allowed", r.Changes[0].Before.String())
	assert.Equal(t, "held: ChangeFreeze", r.Changes[0].After.String())

	var out bytes.Buffer
	require.NoError(t, r.WriteTable(&out, printers.TableOptions{Only: "plans", NoHeaders: true}))
	assert.Contains(t, out.String(), "approve", "the plan approved under the policies in force")
	assert.Contains(t, out.String(), "ChangeFreeze", "and blocked under the candidate")

	out.Reset()
	require.NoError(t, r.WriteTable(&out, printers.TableOptions{Only: "newly-allowed"}))
	assert.Empty(t, out.String(), "no table for a group without rows")
}

func TestVerdictString(t *testing.T) {
	assert.Equal(t, "allowed", impact.Verdict{Allowed: true}.String())
	assert.Equal(t, "denied", impact.Verdict{}.String())
	assert.Equal(t, "held: A, B", impact.Verdict{Codes: []string{"A", "B"}}.String())
}

func TestPrintableNamesTheChangedSubscriptions(t *testing.T) {
	inForce, candidate := evaluators(t)
	r, err := impact.Compare(context.Background(), inForce, candidate, "the snapshot")
	require.NoError(t, err)
	var names bytes.Buffer
	require.NoError(t, printers.WriteNames(&names, r.Printable().Names()))
	assert.Equal(t, "subscription.operators.coreos.com/etcd\n", names.String())
}
