package input_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// build builds the document of key from snap and logs how long it took and what it allocated.
func build(t *testing.T, snap *snapshot.Snapshot) *input.Document {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	doc, err := (&input.Builder{Reader: snap, Now: func() time.Time { return now }}).Build(context.Background(), key)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.NotNil(t, doc)
	t.Logf("building the document took %v and allocated %.1f MiB", took, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
	return doc
}

// operandSnapshot is etcd.v1 installed with n EtcdClusters in its namespace.
func operandSnapshot(t *testing.T, n int) *snapshot.Snapshot {
	t.Helper()
	snap := snapshot.New()
	require.NoError(t, snap.Add(subscription("etcd", "etcd.v1", "etcd.v1")))
	require.NoError(t, snap.Add(csv("etcd.v1", v1alpha1.CRDDescription{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"})))
	for i := range n {
		require.NoError(t, snap.Add(operand(ns, fmt.Sprintf("cluster-%05d", i))))
	}
	return snap
}

func TestLimitsOperandsUpToTheCapAreAllListed(t *testing.T) {
	const n = 5000
	doc := build(t, operandSnapshot(t, n))
	ops := doc.Doc["operands"].([]any)
	require.Len(t, ops, n)
	assert.Equal(t, "cluster-00000", ops[0].(map[string]any)["metadata"].(map[string]any)["name"])
	assert.Equal(t, fmt.Sprintf("cluster-%05d", n-1), ops[n-1].(map[string]any)["metadata"].(map[string]any)["name"])
}

// Past MaxOperands the document lists the first MaxOperands+1 (by kind, namespace and name):
// one more than the engine judges, so the evaluation fails closed rather than judge a part.
func TestLimitsOperandsPastTheCapAreCutToOneMore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,050 operands")
	}
	const n = input.MaxOperands + 50
	doc := build(t, operandSnapshot(t, n))
	ops := doc.Doc["operands"].([]any)
	require.Len(t, ops, input.MaxOperands+1)
	assert.Equal(t, fmt.Sprintf("cluster-%05d", input.MaxOperands), ops[input.MaxOperands].(map[string]any)["metadata"].(map[string]any)["name"])
}

// nestedStatus is a map nested depth levels deep: {"a": {"a": ... {"leaf": true}}}.
func nestedStatus(depth int) map[string]any {
	v := map[string]any{"leaf": true}
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// The API server decodes JSON with a nesting limit of 10,000: an operand's status can nest
// that deep. Storing it, listing it (the snapshot converts) and copying it into the document
// all recurse through it, without a stack overflow.
func TestLimitsADeeplyNestedOperandIsListed(t *testing.T) {
	const depth = 10000
	snap := operandSnapshot(t, 0)
	deep := operand(ns, "deep")
	require.NoError(t, unstructured.SetNestedField(deep.Object, nestedStatus(depth), "status", "deep"))
	require.NoError(t, snap.Add(deep))
	doc := build(t, snap)
	ops := doc.Doc["operands"].([]any)
	require.Len(t, ops, 1)
	v := ops[0].(map[string]any)["status"].(map[string]any)["deep"]
	levels := 0
	for {
		m, ok := v.(map[string]any)
		if !ok || m["a"] == nil {
			break
		}
		v, levels = m["a"], levels+1
	}
	assert.Equal(t, depth, levels, "the nesting arrives whole")
}

// A snapshot file is YAML (or JSON) of at most snapshot.MaxFileSize: its parser refuses nesting
// beyond its own depth limit with an error, and loads what the API server could have served.
func TestLimitsADeeplyNestedSnapshotFile(t *testing.T) {
	file := func(depth int) string {
		path := filepath.Join(t.TempDir(), "snapshot.yaml")
		doc := fmt.Sprintf(`apiVersion: etcd.database.coreos.com/v1beta2
kind: EtcdCluster
metadata: {namespace: %s, name: deep}
status:
  conditions: [{type: Available, status: "True"}]
  deep: %s1%s
`, ns, strings.Repeat("{a: ", depth), strings.Repeat("}", depth))
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
		return path
	}
	for _, tc := range []struct {
		depth int
		loads bool
	}{{9000, true}, {20000, false}, {200000, false}} {
		t.Run(fmt.Sprint(tc.depth), func(t *testing.T) {
			start := time.Now()
			snap, err := snapshot.Load(file(tc.depth))
			t.Logf("loading %d levels took %v: %v", tc.depth, time.Since(start), err)
			if !tc.loads {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "depth")
				return
			}
			require.NoError(t, err)
			require.NoError(t, snap.Add(subscription("etcd", "etcd.v1", "etcd.v1")))
			require.NoError(t, snap.Add(csv("etcd.v1", v1alpha1.CRDDescription{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"})))
			assert.Len(t, build(t, snap).Doc["operands"], 1)
		})
	}
}
