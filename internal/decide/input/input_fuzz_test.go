package input_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// FuzzBuild builds the input document of every Subscription of a fuzzed snapshot, read by
// snapshot.Load as `tollgate eval` reads it. Seeds are the snapshots under
// test/testdata/snapshots and the edge cases in testdata/fuzz/FuzzBuild. Beyond "no panic":
// on a snapshot that loaded, Build never fails and finds every Subscription; the document has
// every key of version 1 and is JSON; its operatorCondition is there exactly when the
// snapshot holds the OperatorCondition named after the installed CSV, and carries the same
// Upgradeable entries (type and status of spec.overrides, spec.conditions and
// status.conditions) as that object read untyped; its installedCSV is there exactly when that
// CSV is; and every pending plan is in the namespace, lists the current CSV and is neither
// Complete nor Failed.
func FuzzBuild(f *testing.F) {
	seeds, _ := filepath.Glob(repo.Path("test", "testdata", "snapshots", "*.yaml"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "snapshot.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.Load(file)
		if err != nil {
			return
		}
		var subs v1alpha1.SubscriptionList
		if err := snap.List(ctx, &subs); err != nil {
			t.Fatalf("list subscriptions: %v", err)
		}
		b := &input.Builder{Reader: snap, Now: func() time.Time { return at }}
		for _, sub := range subs.Items {
			key := client.ObjectKeyFromObject(&sub)
			doc, err := b.Build(ctx, key)
			if err != nil {
				t.Fatalf("build %s: %v", key, err)
			}
			if doc == nil || doc.Subscription == nil || client.ObjectKeyFromObject(doc.Subscription) != key {
				t.Fatalf("build %s: no document for a Subscription the snapshot holds", key)
			}
			for _, k := range policies.InputV1 {
				if _, ok := doc.Doc[k.Name]; !ok {
					t.Fatalf("build %s: the document has no %s", key, k.Name)
				}
			}
			if doc.Doc["apiVersion"] != input.APIVersion {
				t.Fatalf("build %s: apiVersion %v", key, doc.Doc["apiVersion"])
			}
			if _, err := json.Marshal(doc.Doc); err != nil {
				t.Fatalf("build %s: the document is not JSON: %v", key, err)
			}
			checkOperatorCondition(t, snap, &sub, doc.Doc["operatorCondition"])
			installed := sub.Status.InstalledCSV != "" && exists(ctx, snap, sub.Namespace, sub.Status.InstalledCSV,
				v1alpha1.GroupVersion.WithKind("ClusterServiceVersion"))
			if (doc.Doc["installedCSV"] != nil) != installed || (doc.InstalledCSV != nil) != installed {
				t.Fatalf("build %s: installedCSV in the document: %v, in the snapshot: %v", key, doc.Doc["installedCSV"] != nil, installed)
			}
			for _, p := range doc.PendingInstallPlans {
				phase := v1alpha1.InstallPlanPhase("")
				if p.Status != nil {
					phase = p.Status.Phase
				}
				if p.Namespace != sub.Namespace || !slices.Contains(p.Spec.ClusterServiceVersionNames, sub.Status.CurrentCSV) ||
					phase == v1alpha1.InstallPlanPhaseComplete || phase == v1alpha1.InstallPlanPhaseFailed {
					t.Fatalf("build %s: pending plan %s/%s (phase %q, CSVs %v) is not pending for current CSV %q",
						key, p.Namespace, p.Name, phase, p.Spec.ClusterServiceVersionNames, sub.Status.CurrentCSV)
				}
			}
		}
	})
}

var operatorConditionV2 = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v2", Kind: "OperatorCondition"}

func exists(ctx context.Context, r client.Reader, ns, name string, gvk schema.GroupVersionKind) bool {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return r.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u) == nil
}

// checkOperatorCondition checks the document's operatorCondition against the object the
// snapshot holds, read untyped.
func checkOperatorCondition(t *testing.T, snap *snapshot.Snapshot, sub *v1alpha1.Subscription, got any) {
	t.Helper()
	var want *unstructured.Unstructured
	if name := sub.Status.InstalledCSV; name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(operatorConditionV2)
		if err := snap.Get(context.Background(), types.NamespacedName{Namespace: sub.Namespace, Name: name}, u); err == nil {
			want = u
		}
	}
	if want == nil {
		if got != nil {
			t.Fatalf("%s/%s: an operatorCondition in the document, none named after installed CSV %q in the snapshot", sub.Namespace, sub.Name, sub.Status.InstalledCSV)
		}
		return
	}
	doc, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("%s/%s: no operatorCondition in the document, but the snapshot holds %s", sub.Namespace, sub.Name, want.GetName())
	}
	for _, field := range [][]string{{"spec", "overrides"}, {"spec", "conditions"}, {"status", "conditions"}} {
		if a, b := upgradeables(want.Object, field), upgradeables(doc, field); !reflect.DeepEqual(a, b) {
			t.Fatalf("%s/%s: %v of OperatorCondition %s: Upgradeable entries %v in the snapshot, %v in the document",
				sub.Namespace, sub.Name, field, want.GetName(), a, b)
		}
	}
}

// upgradeables are the statuses of the entries of type Upgradeable of the list at field of
// obj, in order.
func upgradeables(obj map[string]any, field []string) []string {
	list, _, _ := unstructured.NestedSlice(obj, field...)
	out := []string{}
	for _, it := range list {
		if m, ok := it.(map[string]any); ok && m["type"] == "Upgradeable" {
			s, _ := m["status"].(string)
			out = append(out, s)
		}
	}
	return out
}
