package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/snapshot"
)

const multiDoc = `# exported with kubectl
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
  namespace: operators
  managedFields:
  - manager: olm
spec:
  name: etcd
  source: operatorhubio
  sourceNamespace: olm
---
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: broken
  namespace: olm
spec: [unclosed
---
apiVersion: etcd.database.coreos.com/v1beta2
kind: EtcdCluster
metadata:
  name: main
  namespace: operators
`

const list = `apiVersion: v1
kind: List
items:
- apiVersion: operators.coreos.com/v1alpha1
  kind: CatalogSource
  metadata: {name: operatorhubio, namespace: olm, labels: {tier: community}}
- apiVersion: operators.coreos.com/v1alpha1
  kind: CatalogSource
  metadata: {name: private, namespace: operators}
`

const jsonDoc = `{"apiVersion": "tollgate.dev/v1alpha1", "kind": "UpgradeGate", "metadata": {"name": "etcd", "namespace": "operators"}, "spec": {"mode": "Audit"}}`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	return dir
}

func TestLoadSnapshot(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"state.yaml":         multiDoc,
		"nested/list.yml":    list,
		"nested/gate.json":   jsonDoc,
		"nested/README.md":   "not a manifest",
		"nested/nokind.yaml": "metadata: {name: x}\n",
	})
	s, problems, err := snapshot.Load(dir)
	require.NoError(t, err)

	require.Len(t, problems, 2)
	assert.Equal(t, filepath.Join(dir, "nested/nokind.yaml"), problems[0].File)
	assert.Equal(t, filepath.Join(dir, "state.yaml"), problems[1].File)
	assert.Equal(t, 2, problems[1].Document, "the malformed document is the second")
	assert.Equal(t, 19, problems[1].Line, "the parser's line, counted in the file")
	assert.Contains(t, problems[1].Error(), "state.yaml: document 2 (line 19): did not find expected ',' or ']'")

	ctx := context.Background()
	sub := &v1alpha1.Subscription{}
	require.NoError(t, s.Get(ctx, client.ObjectKey{Namespace: "operators", Name: "etcd"}, sub), "documents around the broken one load")
	assert.Equal(t, "etcd", sub.Spec.Package)

	var cats v1alpha1.CatalogSourceList
	require.NoError(t, s.List(ctx, &cats))
	require.Len(t, cats.Items, 2, "a kind: List contributes its items; the broken catalog does not")
	assert.Equal(t, "operatorhubio", cats.Items[0].Name, "sorted by namespace then name")

	require.NoError(t, s.List(ctx, &cats, client.InNamespace("operators")))
	assert.Len(t, cats.Items, 1)
	require.NoError(t, s.List(ctx, &cats, client.MatchingLabels{"tier": "community"}))
	assert.Len(t, cats.Items, 1)

	g := &tollgatev1alpha1.UpgradeGate{}
	require.NoError(t, s.Get(ctx, client.ObjectKey{Namespace: "operators", Name: "etcd"}, g), "JSON files load too")
	assert.Equal(t, tollgatev1alpha1.ModeAudit, g.Spec.Mode)

	operands := &unstructured.UnstructuredList{}
	operands.SetGroupVersionKind(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdClusterList"})
	require.NoError(t, s.List(ctx, operands, client.InNamespace("operators")))
	assert.Len(t, operands.Items, 1, "unknown kinds are kept as unstructured")

	err = s.Get(ctx, client.ObjectKey{Namespace: "operators", Name: "missing"}, &v1alpha1.ClusterServiceVersion{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

func TestLoadSnapshotReportsUnreadablePaths(t *testing.T) {
	_, _, err := snapshot.Load(filepath.Join(t.TempDir(), "nope.yaml"))
	assert.Error(t, err)
}

func TestSnapshotAddAndUpsert(t *testing.T) {
	s := snapshot.New()
	ctx := context.Background()
	g := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "etcd"}}
	require.NoError(t, s.Add(g))
	assert.True(t, apierrors.IsAlreadyExists(s.Add(g)))

	decided := g.DeepCopy()
	decided.Status.Decision.EvaluatedAt = &metav1.Time{Time: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	decided.Status.Decision.Denials = []tollgatev1alpha1.Denial{{Code: "OperatorNotUpgradeable", Message: "no"}}
	require.NoError(t, s.Upsert(decided))

	got := &tollgatev1alpha1.UpgradeGate{}
	require.NoError(t, s.Get(ctx, client.ObjectKeyFromObject(g), got))
	assert.Equal(t, "OperatorNotUpgradeable", got.Status.Decision.Denials[0].Code)
}
