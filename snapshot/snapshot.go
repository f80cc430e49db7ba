// Package snapshot is cluster state as files: Capture reads from a live cluster everything
// Tollgate decides on and Write prints it as YAML or JSON; a Snapshot loads such files back as a
// client.Reader, so the CLI evaluates offline exactly what the manager evaluates live.
package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/apis"
)

// scheme knows the kinds a snapshot can return typed.
var scheme = apis.NewScheme()

// Snapshot is an in-memory client.Reader over objects loaded from files, so the CLI evaluates
// offline exactly what the controller evaluates live. Objects are stored as unstructured; a
// kind the scheme knows can be read typed too, any other kind (operands of arbitrary CRDs)
// only as unstructured. Safe for concurrent use.
type Snapshot struct {
	mu      sync.RWMutex
	objects map[schema.GroupVersionKind]map[client.ObjectKey]*unstructured.Unstructured
}

var _ client.Reader = (*Snapshot)(nil)

// LoadError is one document that could not be loaded; the rest of the files still load.
type LoadError struct {
	File     string
	Document int // 1-based index of the YAML document in the file
	Line     int // 1-based line of the problem in the file when the parser says, else where the document starts
	Err      error
}

func (e LoadError) Error() string {
	return fmt.Sprintf("%s: document %d (line %d): %v", e.File, e.Document, e.Line, e.Err)
}

// New returns an empty snapshot.
func New() *Snapshot {
	return &Snapshot{objects: map[schema.GroupVersionKind]map[client.ObjectKey]*unstructured.Unstructured{}}
}

// Load reads YAML or JSON files — multi-document, `kind: List`, or folders of them, as
// `kubectl get -o yaml` prints. Malformed documents are reported as LoadErrors and skipped; the
// error is for a path that cannot be read at all.
func Load(paths ...string) (*Snapshot, []LoadError, error) {
	s := New()
	var problems []LoadError
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			ext := strings.ToLower(filepath.Ext(p))
			if d.IsDir() || (p != root && ext != ".yaml" && ext != ".yml" && ext != ".json") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			problems = append(problems, s.load(p, b)...)
			return nil
		})
		if err != nil {
			return nil, problems, fmt.Errorf("load snapshot %s: %w", root, err)
		}
	}
	return s, problems, nil
}

var (
	separator = regexp.MustCompile(`^---\s*(#.*)?$`)
	yamlLine  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

func (s *Snapshot) load(file string, b []byte) []LoadError {
	var problems []LoadError
	lines := bytes.SplitAfter(b, []byte("\n"))
	doc, start := 1, 1
	var buf bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(buf.Bytes())) > 0 {
			if err := s.loadDocument(buf.Bytes()); err != nil {
				le := LoadError{File: file, Document: doc, Line: start, Err: err}
				// The YAML parser counts lines from the document's start; report them in the file.
				if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
					n, _ := strconv.Atoi(m[1])
					le.Line, le.Err = start+n-1, errors.New(m[2])
				}
				problems = append(problems, le)
			}
			doc++
		}
		buf.Reset()
	}
	for i, line := range lines {
		if separator.Match(bytes.TrimRight(line, "\r\n")) {
			flush()
			start = i + 2
			continue
		}
		if buf.Len() == 0 && len(bytes.TrimSpace(line)) == 0 {
			start = i + 2 // leading blank lines belong to no document
		}
		buf.Write(line)
	}
	flush()
	return problems
}

func (s *Snapshot) loadDocument(b []byte) error {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return fmt.Errorf("not an object: %w", err)
	}
	if m == nil {
		return nil // only comments
	}
	u := &unstructured.Unstructured{Object: m}
	if items, ok := m["items"].([]any); ok && strings.HasSuffix(u.GetKind(), "List") {
		for i, it := range items {
			obj, ok := it.(map[string]any)
			if !ok {
				return fmt.Errorf("items[%d] is not an object", i)
			}
			if err := s.Upsert(&unstructured.Unstructured{Object: obj}); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	}
	return s.Upsert(u)
}

// Add stores obj; it fails if an object of that kind, namespace and name exists.
func (s *Snapshot) Add(obj client.Object) error { return s.put(obj, false) }

// Upsert stores obj, replacing an existing one (the CLI stores computed gate statuses).
func (s *Snapshot) Upsert(obj client.Object) error { return s.put(obj, true) }

func (s *Snapshot) put(obj client.Object, replace bool) error {
	gvk, err := gvkOf(obj)
	if err != nil {
		return err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	if gvk.Kind == "" || gvk.Version == "" || u.GetName() == "" {
		return fmt.Errorf("object needs apiVersion, kind and metadata.name")
	}
	key := client.ObjectKeyFromObject(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.objects[gvk]
	if byKey == nil {
		byKey = map[client.ObjectKey]*unstructured.Unstructured{}
		s.objects[gvk] = byKey
	}
	if _, exists := byKey[key]; exists && !replace {
		return apierrors.NewAlreadyExists(resource(gvk), key.String())
	}
	byKey[key] = u
	return nil
}

// Get implements client.Reader.
func (s *Snapshot) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := gvkOf(obj)
	if err != nil {
		return err
	}
	s.mu.RLock()
	u, ok := s.objects[gvk][key]
	s.mu.RUnlock()
	if !ok {
		return apierrors.NewNotFound(resource(gvk), key.Name)
	}
	return into(u.DeepCopy().Object, obj)
}

// List implements client.Reader; it honours the namespace and label selector options.
func (s *Snapshot) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := gvkOf(list)
	if err != nil {
		return err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	s.mu.RLock()
	var items []any
	for key, u := range s.objects[gvk] {
		if (lo.Namespace == "" || key.Namespace == lo.Namespace) &&
			(lo.LabelSelector == nil || lo.LabelSelector.Matches(labels.Set(u.GetLabels()))) {
			items = append(items, u.DeepCopy().Object)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(items, func(a, b any) int {
		ua, ub := unstructured.Unstructured{Object: a.(map[string]any)}, unstructured.Unstructured{Object: b.(map[string]any)}
		return cmp.Or(cmp.Compare(ua.GetNamespace(), ub.GetNamespace()), cmp.Compare(ua.GetName(), ub.GetName()))
	})
	if ul, ok := list.(*unstructured.UnstructuredList); ok {
		ul.Items = ul.Items[:0]
		for _, it := range items {
			ul.Items = append(ul.Items, unstructured.Unstructured{Object: it.(map[string]any)})
		}
		return nil
	}
	return into(map[string]any{"items": items}, list)
}

func into(m map[string]any, obj runtime.Object) error {
	if u, ok := obj.(runtime.Unstructured); ok {
		u.SetUnstructuredContent(m)
		return nil
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj)
}

// gvkOf is an unstructured object's own GVK or a typed object's GVK in the scheme.
func gvkOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		gvk := u.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" {
			return gvk, fmt.Errorf("unstructured object has no kind")
		}
		return gvk, nil
	}
	return apiutil.GVKForObject(obj, scheme)
}

// resource names a kind in error messages (the snapshot has no REST mapping).
func resource(gvk schema.GroupVersionKind) schema.GroupResource {
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}
