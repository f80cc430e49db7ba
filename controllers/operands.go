package controllers

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// operandWatches starts a watch on each operand kind the first time an installed CSV owns
// it, and remembers which Subscriptions own which kinds, so an operand turning Degraded
// re-evaluates exactly its operator.
type operandWatches struct {
	ctrl   controller.Controller
	cache  cache.Cache
	mapper meta.RESTMapper
	mapTo  func(func(client.Object, *v1alpha1.Subscription) bool) handler.EventHandler

	mu      sync.RWMutex
	watched map[schema.GroupVersionKind]bool
	owners  map[schema.GroupVersionKind]map[types.NamespacedName]bool
}

func newOperandWatches(c controller.Controller, ca cache.Cache, m meta.RESTMapper, mapTo func(func(client.Object, *v1alpha1.Subscription) bool) handler.EventHandler) *operandWatches {
	return &operandWatches{ctrl: c, cache: ca, mapper: m, mapTo: mapTo,
		watched: map[schema.GroupVersionKind]bool{}, owners: map[schema.GroupVersionKind]map[types.NamespacedName]bool{}}
}

// watch records that sub owns gvks (and no others) and watches any new kind the API server
// serves. A kind that is not served yet is retried on the next reconcile: OLM installs a
// CSV's CRDs before the CSV succeeds, and the CSV's update brings us back.
func (w *operandWatches) watch(ctx context.Context, sub types.NamespacedName, gvks []schema.GroupVersionKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(sub)
	for _, gvk := range gvks {
		if w.owners[gvk] == nil {
			w.owners[gvk] = map[types.NamespacedName]bool{}
		}
		w.owners[gvk][sub] = true
		if w.watched[gvk] {
			continue
		}
		if _, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return fmt.Errorf("look up operand kind %s: %w", gvk, err)
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := w.ctrl.Watch(source.Kind[client.Object](w.cache, u, w.mapTo(w.ownedBy(gvk)))); err != nil {
			return fmt.Errorf("watch operand kind %s: %w", gvk, err)
		}
		w.watched[gvk] = true
		ctrl.LoggerFrom(ctx).Info("watching operand kind", "gvk", gvk.String())
	}
	return nil
}

// ownedBy matches the Subscriptions whose installed CSV owns gvk.
func (w *operandWatches) ownedBy(gvk schema.GroupVersionKind) func(client.Object, *v1alpha1.Subscription) bool {
	return func(_ client.Object, sub *v1alpha1.Subscription) bool {
		w.mu.RLock()
		defer w.mu.RUnlock()
		return w.owners[gvk][key(sub)]
	}
}

// forget drops a Subscription that is gone.
func (w *operandWatches) forget(sub types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(sub)
}

func (w *operandWatches) forgetLocked(sub types.NamespacedName) {
	for _, owners := range w.owners {
		delete(owners, sub)
	}
}
