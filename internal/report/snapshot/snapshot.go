// Package snapshot is cluster state as files: Capture reads from a live cluster everything
// Tollgate decides on and Write prints it as YAML or JSON; Load reads such files back, strictly
// (whole or not at all), as a Snapshot, a client.Reader, so the CLI evaluates offline exactly
// what the manager evaluates live.
package snapshot

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tollgate-dev/tollgate/apis"
)

// scheme knows the kinds a snapshot can return typed.
var scheme = apis.NewScheme()

// Snapshot is an in-memory client.Reader over objects loaded from files, so the CLI evaluates
// offline exactly what the controller evaluates live. Objects are stored as unstructured, one
// per kind, namespace and name; a kind the scheme knows can be read typed too, any other kind
// (operands of arbitrary CRDs) only as unstructured. A kind the API server serves in several
// versions (OperatorCondition v1 and v2) is read in the version asked for, as the API server
// serves it. Safe for concurrent use.
type Snapshot struct {
	mu      sync.RWMutex
	objects map[schema.GroupKind]map[client.ObjectKey]entry
}

// entry is a stored object and where it was read from ("" when it was added).
type entry struct {
	obj  *unstructured.Unstructured
	from string
}

var _ client.Reader = (*Snapshot)(nil)

// New returns an empty snapshot.
func New() *Snapshot {
	return &Snapshot{objects: map[schema.GroupKind]map[client.ObjectKey]entry{}}
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
	if replace {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.byKind(gvk.GroupKind())[client.ObjectKeyFromObject(u)] = entry{obj: u}
		return nil
	}
	if s.insert(u, "") != "" {
		return apierrors.NewAlreadyExists(resource(gvk), client.ObjectKeyFromObject(u).String())
	}
	return nil
}

// insert stores u, read from from ("" when added), unless an object of its kind, namespace
// and name is there: then it returns where that one was read from, or "added". An identical
// copy read from another place is the same object, not a conflict (scenario files may each
// carry the global catalog): nothing is lost whichever is kept.
func (s *Snapshot) insert(u *unstructured.Unstructured, from string) (other string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.byKind(u.GroupVersionKind().GroupKind())
	key := client.ObjectKeyFromObject(u)
	if e, exists := byKey[key]; exists {
		if from != "" && e.from != "" && reflect.DeepEqual(e.obj.Object, u.Object) {
			return ""
		}
		return cmp.Or(e.from, "added")
	}
	byKey[key] = entry{obj: u, from: from}
	return ""
}

func (s *Snapshot) byKind(gk schema.GroupKind) map[client.ObjectKey]entry {
	byKey := s.objects[gk]
	if byKey == nil {
		byKey = map[client.ObjectKey]entry{}
		s.objects[gk] = byKey
	}
	return byKey
}

// as is a copy of u in version, or nil when the API server does not serve u in it. An
// operand (a kind of some CRD, unknown here) is one object in every version its CRD serves,
// as the API server converts it: it is returned as it was written, whichever version is
// asked for, so `kubectl get -o yaml` in the CRD's preferred version is read.
func as(u *unstructured.Unstructured, version string) map[string]any {
	gvk := u.GroupVersionKind()
	if operand(gvk) {
		return u.DeepCopy().Object
	}
	if !served(gvk.GroupKind(), version, gvk.Version) {
		return nil
	}
	c := u.DeepCopy()
	c.SetAPIVersion(schema.GroupVersion{Group: gvk.Group, Version: version}.String())
	return c.Object
}

// Get implements client.Reader.
func (s *Snapshot) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := gvkOf(obj)
	if err != nil {
		return err
	}
	s.mu.RLock()
	e, ok := s.objects[gvk.GroupKind()][key]
	s.mu.RUnlock()
	var m map[string]any
	if ok {
		m = as(e.obj, gvk.Version)
	}
	if m == nil {
		return apierrors.NewNotFound(resource(gvk), key.Name)
	}
	return into(m, obj)
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
	for key, e := range s.objects[gvk.GroupKind()] {
		if (lo.Namespace == "" || key.Namespace == lo.Namespace) &&
			(lo.LabelSelector == nil || lo.LabelSelector.Matches(labels.Set(e.obj.GetLabels()))) {
			if m := as(e.obj, gvk.Version); m != nil {
				items = append(items, m)
			}
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
