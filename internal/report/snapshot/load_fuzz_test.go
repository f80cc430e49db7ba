package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// FuzzLoad feeds arbitrary bytes to the snapshot reader as one file. Its seeds are the
// snapshots under test/testdata/snapshots plus the edge cases in testdata/fuzz/FuzzLoad.
// Beyond "no panic", it checks the reader's promise to the input builder: a snapshot is
// returned whole or not at all, every problem is a *LoadError, and every object it accepts
// can be read back typed, in every version its kind is served in, with the typed lists too
// (so the builder never meets a decode error on a snapshot that loaded), and reading the same
// bytes again gives the same objects.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob(repo.Path("test", "testdata", "snapshots", "*.yaml"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, problems := loadBytes(data)
		if len(problems) > 0 {
			for _, p := range problems {
				var le *LoadError
				if !errors.As(p, &le) {
					t.Fatalf("a problem is not a *LoadError: %T %v", p, p)
				}
				if le.Document < 1 {
					t.Fatalf("a problem names document %d: %v", le.Document, le)
				}
				_ = le.Error()
			}
			return
		}
		again, problems := loadBytes(data)
		if len(problems) > 0 {
			t.Fatalf("the same bytes loaded once and then failed: %v", problems)
		}
		if !reflect.DeepEqual(objectsOf(snap), objectsOf(again)) {
			t.Fatalf("the same bytes loaded twice give different objects")
		}
		ctx := context.Background()
		for gk, byKey := range snap.objects {
			info, known := kinds[gk]
			for key, e := range byKey {
				if e.obj.GetName() == "" || e.obj.GetKind() == "" || e.obj.GetAPIVersion() == "" {
					t.Fatalf("accepted an object without apiVersion, kind or name: %v", e.obj.Object)
				}
				if key != client.ObjectKeyFromObject(e.obj) {
					t.Fatalf("object stored under %v is %v", key, client.ObjectKeyFromObject(e.obj))
				}
				if !known {
					continue
				}
				if info.reads && key.Namespace == "" {
					t.Fatalf("accepted a %s without a namespace: %s", gk.Kind, key.Name)
				}
				for _, v := range info.versions {
					gvk := gk.WithVersion(v)
					if !scheme.Recognizes(gvk) {
						continue
					}
					typed, err := scheme.New(gvk)
					if err != nil {
						t.Fatal(err)
					}
					if err := snap.Get(ctx, key, typed.(client.Object)); err != nil {
						t.Fatalf("%s %s loaded but does not read as %s: %v", gk.Kind, key, gvk.GroupVersion(), err)
					}
					listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
					if !scheme.Recognizes(listGVK) {
						continue
					}
					list, err := scheme.New(listGVK)
					if err != nil {
						t.Fatal(err)
					}
					if err := snap.List(ctx, list.(client.ObjectList), client.InNamespace(key.Namespace)); err != nil {
						t.Fatalf("%s in %s loaded but do not list as %s: %v", gk.Kind, key.Namespace, listGVK, err)
					}
				}
			}
		}
	})
}

// loadBytes reads data as Load reads one file.
func loadBytes(data []byte) (*Snapshot, []error) {
	l := &loader{snap: New()}
	l.file("fuzz.yaml", data)
	return l.snap, l.problems
}

func objectsOf(s *Snapshot) map[schema.GroupKind]map[client.ObjectKey]map[string]any {
	out := map[schema.GroupKind]map[client.ObjectKey]map[string]any{}
	for gk, byKey := range s.objects {
		out[gk] = map[client.ObjectKey]map[string]any{}
		for k, e := range byKey {
			out[gk][k] = (&unstructured.Unstructured{Object: e.obj.Object}).DeepCopy().Object
		}
	}
	return out
}
