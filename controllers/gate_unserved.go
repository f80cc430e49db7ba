package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unservedRecheck is how long a kind the API server did not serve is taken as still not
// served. OLM's optional APIs (PackageManifests without the package server, OperatorCondition
// v2 on old clusters) are absent on many clusters, and every read of an absent kind costs a
// discovery request: without this, one per evaluation.
const unservedRecheck = time.Minute

// unservedKinds is a client.Reader that remembers, for unservedRecheck, the kinds whose
// reads failed with "no match for kind", and fails their reads the same way without asking the
// API server again. Once the kind is served, the next read after that time finds it.
type unservedKinds struct {
	client.Reader
	// kinds names the kind of an object or list (the client's scheme).
	kinds interface {
		GroupVersionKindFor(runtime.Object) (schema.GroupVersionKind, error)
	}
	now func() time.Time

	mu    sync.Mutex
	until map[schema.GroupVersionKind]time.Time
	errs  map[schema.GroupVersionKind]error
}

func newUnservedKinds(r client.Reader, c client.Client) *unservedKinds {
	return &unservedKinds{Reader: r, kinds: c, now: time.Now,
		until: map[schema.GroupVersionKind]time.Time{}, errs: map[schema.GroupVersionKind]error{}}
}

// Get implements client.Reader.
func (u *unservedKinds) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return u.read(obj, func() error { return u.Reader.Get(ctx, key, obj, opts...) })
}

// List implements client.Reader.
func (u *unservedKinds) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return u.read(list, func() error { return u.Reader.List(ctx, list, opts...) })
}

func (u *unservedKinds) read(obj runtime.Object, read func() error) error {
	gvk, err := u.kinds.GroupVersionKindFor(obj)
	if err != nil {
		return read()
	}
	u.mu.Lock()
	if u.now().Before(u.until[gvk]) {
		err := u.errs[gvk]
		u.mu.Unlock()
		return err
	}
	u.mu.Unlock()
	err = read()
	if meta.IsNoMatchError(err) {
		u.mu.Lock()
		u.until[gvk], u.errs[gvk] = u.now().Add(unservedRecheck), err
		u.mu.Unlock()
	}
	return err
}
