package policyset_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/report/policyset"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

const ns = "tollgate-system"

// freeze is a policy ConfigMap holding team-f's upgrades; rule is its rule body's condition.
func freeze(rule string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  name: freeze
  namespace: tollgate-system
  labels: {tollgate.dev/policy: rego}
data:
  freeze.rego: |
    package tollgate.packs.sitefreeze

    # METADATA
    # custom:
    #   code: ChangeFreeze
    deny contains {"code": rego.metadata.rule().custom.code, "message": "frozen"} if {
    	` + rule + `
    }
`
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// cluster is a snapshot holding one policy ConfigMap.
func cluster(t *testing.T, cm string) *snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.Load(write(t, t.TempDir(), "state.yaml", cm))
	require.NoError(t, err)
	return snap
}

func embeddedRevision(t *testing.T) string {
	e, err := engine.New(context.Background(), engine.Options{})
	require.NoError(t, err)
	return e.Revision()
}

func TestBuildReadsThePolicyConfigMaps(t *testing.T) {
	var warn bytes.Buffer
	e, view, err := policyset.Sources{Namespace: ns}.Build(context.Background(), cluster(t, freeze(`input.subscription.metadata.namespace == "team-f"`)), &warn)
	require.NoError(t, err)
	assert.Empty(t, warn.String())
	assert.NotEqual(t, embeddedRevision(t), e.Revision(), "the ConfigMap is in the set")
	require.Len(t, view.ConfigMaps, 1)
	assert.Equal(t, "freeze", view.ConfigMaps[0].Name)
	assert.True(t, view.ConfigMaps[0].Used)

	e, view, err = policyset.Sources{Namespace: "elsewhere"}.Build(context.Background(), cluster(t, freeze("true")), &warn)
	require.NoError(t, err)
	assert.Equal(t, embeddedRevision(t), e.Revision(), "only the ConfigMaps of the policy namespace")
	assert.Empty(t, view.ConfigMaps)
}

// A ConfigMap the manager would reject is left out, as the manager keeps it out of service,
// and said so.
func TestBuildLeavesARejectedConfigMapOut(t *testing.T) {
	var warn bytes.Buffer
	e, view, err := policyset.Sources{Namespace: ns}.Build(context.Background(), cluster(t, freeze("input.subscription.metadata.namespace ==")), &warn)
	require.NoError(t, err)
	assert.Equal(t, embeddedRevision(t), e.Revision())
	require.Len(t, view.ConfigMaps, 1)
	assert.False(t, view.ConfigMaps[0].Used)
	assert.Contains(t, warn.String(), "policy ConfigMap tollgate-system/freeze is not in service")
}

func TestBuildRefusesALocalFolderThatDoesNotCompile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "site/site.rego", "package tollgate.packs.site\n\ndeny contains x if {\n")
	_, _, err := policyset.Sources{Dir: dir, Namespace: ns}.Build(context.Background(), cluster(t, freeze("true")), &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the policies do not compile")
	assert.Contains(t, err.Error(), "site/site.rego")
}

func TestCandidateReplacesTheConfigMapsOfFiles(t *testing.T) {
	ctx := context.Background()
	inForce := cluster(t, freeze(`input.subscription.metadata.namespace == "team-f"`))
	before, err := policyset.Sources{Namespace: ns}.Engine(ctx, inForce, &bytes.Buffer{})
	require.NoError(t, err)

	lifted := write(t, t.TempDir(), "lifted.yaml", freeze(`input.subscription.metadata.namespace == "nowhere"`))
	after, err := policyset.Sources{Namespace: ns}.Candidate(ctx, inForce, []string{lifted})
	require.NoError(t, err)
	assert.NotEqual(t, before.Revision(), after.Revision())

	same, err := policyset.Sources{Namespace: ns}.Candidate(ctx, inForce, nil)
	require.NoError(t, err)
	assert.Equal(t, before.Revision(), same.Revision(), "no change, the same set")
}

func TestCandidateNamesTheFileAndKeyToFix(t *testing.T) {
	broken := write(t, t.TempDir(), "freeze.yaml", freeze("input.subscription.metadata.namespace =="))
	_, err := policyset.Sources{Namespace: ns}.Candidate(context.Background(), cluster(t, freeze("true")), []string{broken})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the candidate policies do not compile; nothing is compared")
	assert.Contains(t, err.Error(), broken+" (ConfigMap freeze) key freeze.rego:")

	dir := t.TempDir()
	write(t, dir, "site.rego", "package tollgate.packs.site\n\ndeny contains x if {\n")
	_, err = policyset.Sources{Dir: dir, Namespace: ns}.Candidate(context.Background(), cluster(t, freeze("true")), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "site.rego")+":")
}

func TestOfflineIsTheEmbeddedPoliciesWithTheLocalFolder(t *testing.T) {
	ctx := context.Background()
	e, err := policyset.Sources{Namespace: ns}.Offline(ctx)
	require.NoError(t, err)
	assert.Equal(t, embeddedRevision(t), e.Revision(), "no ConfigMap is read")

	dir := t.TempDir()
	write(t, dir, "site/site.rego", "package tollgate.packs.site\n\ndeny contains {\"code\": \"Site\", \"message\": \"held\"} if false\n")
	e, err = policyset.Sources{Dir: dir, Namespace: ns}.Offline(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, embeddedRevision(t), e.Revision(), "the folder's module is in the set")

	write(t, dir, "broken.rego", "package tollgate.packs.broken\n\ndeny contains x if {\n")
	_, err = policyset.Sources{Dir: dir}.Offline(ctx)
	assert.ErrorContains(t, err, "broken.rego")
}
