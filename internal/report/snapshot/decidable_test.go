package snapshot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
)

const (
	aSubscription = `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: operators}
spec: {name: etcd, source: community, sourceNamespace: olm, channel: stable}
`
	aCatalogSource = `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: community, namespace: olm}
spec: {sourceType: grpc, image: quay.io/example/catalog:v1}
`
	aConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: default}
data: {a: b}
`
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestLoadDecidableNeedsSomethingToDecideOrCheck(t *testing.T) {
	ctx := context.Background()
	subs := writeFile(t, aSubscription)
	catalogs := writeFile(t, aCatalogSource)
	neither := writeFile(t, aConfigMap)

	for _, suffice := range []bool{false, true} {
		snap, err := LoadDecidable(ctx, []string{subs}, suffice)
		require.NoError(t, err)
		assert.NotNil(t, snap)
	}

	_, err := LoadDecidable(ctx, []string{catalogs}, false)
	require.ErrorContains(t, err, "no Subscription (operators.coreos.com/v1alpha1) nor ClusterExtension (olm.operatorframework.io/v1) in "+catalogs+": nothing to decide")
	snap, err := LoadDecidable(ctx, []string{catalogs}, true)
	require.NoError(t, err, "CatalogSources alone suffice to lint them")
	assert.NotNil(t, snap)

	_, err = LoadDecidable(ctx, []string{neither}, true)
	require.ErrorContains(t, err, "no Subscription, CatalogSource (operators.coreos.com/v1alpha1) nor ClusterExtension (olm.operatorframework.io/v1) in "+neither)

	extensions := writeFile(t, "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata: {name: demo}\n"+
		"spec: {namespace: demo, source: {sourceType: Catalog, catalog: {packageName: demo}}}\n")
	snap, err = LoadDecidable(ctx, []string{extensions}, false)
	require.NoError(t, err, "ClusterExtensions alone are decided")
	assert.NotNil(t, snap)
	namespaced := writeFile(t, "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata: {name: demo, namespace: x}\n"+
		"spec: {namespace: demo, source: {sourceType: Catalog, catalog: {packageName: demo}}}\n")
	_, err = LoadDecidable(ctx, []string{namespaced}, false)
	require.ErrorContains(t, err, "cluster-scoped")
}

func TestLoadDecidableRefusesPartOfASnapshot(t *testing.T) {
	broken := writeFile(t, aSubscription+"---\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: [oops]}\n")
	_, err := LoadDecidable(context.Background(), []string{broken}, true)
	require.ErrorContains(t, err, "decides nothing on part of it")
	var le *LoadError
	assert.ErrorAs(t, err, &le, "the documents at fault stay readable by the caller")

	_, err = LoadDecidable(context.Background(), []string{filepath.Join(t.TempDir(), "missing.yaml")}, true)
	require.ErrorContains(t, err, "check the --snapshot path")
}

func TestPrintableNamesEveryObjectAndWritesAList(t *testing.T) {
	objs := []map[string]any{
		{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "metadata": map[string]any{"name": "etcd", "namespace": "operators"}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "policy", "namespace": "tollgate-system"}},
	}
	p := Printable(objs, "a header")
	var names bytes.Buffer
	require.NoError(t, printers.WriteNames(&names, p.Names()))
	assert.Equal(t, "subscription.operators.coreos.com/etcd\nconfigmap/policy\n", names.String())
	assert.Equal(t, "List", p.Doc.(map[string]any)["kind"])
	var yaml bytes.Buffer
	require.NoError(t, p.Encode(&yaml, "yaml"))
	assert.Contains(t, yaml.String(), "# a header")
	assert.Contains(t, yaml.String(), "kind: ConfigMap")
}
