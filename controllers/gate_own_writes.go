package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// ownWrites remembers the last version of each gate this manager wrote until its cache has
// it. The cache trails the API server by a watch event, and events come in bursts (OLM
// writes a Subscription's status, then its plan's): a reconcile right after a write would read
// the gate as it was before, and its own write would conflict, cost a retry and delay the
// approval, or its create would find the gate already there; an ExtensionGate read so would
// not show the pin Tollgate just recorded as its own.
type ownWrites[T any, PT gateObject[T]] struct{ m sync.Map } // types.NamespacedName → ownWrite[PT]

// gateObject is a pointer to a kind of gate.
type gateObject[T any] interface {
	*T
	client.Object
	DeepCopy() *T
}

type ownWrite[PT any] struct {
	before string // the resourceVersion the write replaced; "" for a create
	gate   PT
}

// record notes that gate, which had resourceVersion before, was written. The copy is trimmed
// as the cache trims (the API server's answer carries managed fields again).
func (w *ownWrites[T, PT]) record(key types.NamespacedName, before string, gate PT) {
	own := PT(gate.DeepCopy())
	_, _ = input.Trim(own)
	w.m.Store(key, ownWrite[PT]{before: before, gate: own})
}

// seen is told of every version of a gate the cache receives: once it is past what a write
// replaced, the cache holds the write (or a later version) and the copy is dropped.
func (w *ownWrites[T, PT]) seen(obj client.Object) {
	key := client.ObjectKeyFromObject(obj)
	if v, ok := w.m.Load(key); ok && v.(ownWrite[PT]).before != obj.GetResourceVersion() {
		w.m.CompareAndDelete(key, v)
	}
}

// forgetSeen is a predicate that passes every event on and drops the copies the cache has
// caught up with (predicates see an event once the cache holds its object), and the copy of a
// gate the cache saw deleted.
func (w *ownWrites[T, PT]) forgetSeen() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { w.seen(e.Object); return true },
		UpdateFunc: func(e event.UpdateEvent) bool { w.seen(e.ObjectNew); return true },
		DeleteFunc: func(e event.DeleteEvent) bool { w.forget(client.ObjectKeyFromObject(e.Object)); return true },
	}
}

// latest returns the gate to work on, given the cache's copy (nil when the cache has none):
// the gate as written when the cache still shows what the write replaced, or shows no gate at
// all (the cache has not had the create yet, however many writes followed it: a gate it saw
// deleted is forgotten, forgetSeen); else the cache's.
func (w *ownWrites[T, PT]) latest(key types.NamespacedName, cached PT) PT {
	v, ok := w.m.Load(key)
	if !ok {
		return cached
	}
	own := v.(ownWrite[PT])
	if cached == nil || cached.GetResourceVersion() == own.before {
		return own.gate.DeepCopy()
	}
	w.m.Delete(key) // the cache caught up, or someone else wrote since
	return cached
}

// forget drops what is remembered of a gate: it is gone, or a write showed the memory stale.
func (w *ownWrites[T, PT]) forget(key types.NamespacedName) { w.m.Delete(key) }

// upgradeGateWrites and extensionGateWrites are the writes of each kind of gate.
type (
	upgradeGateWrites   = ownWrites[tollgatev1alpha1.UpgradeGate, *tollgatev1alpha1.UpgradeGate]
	extensionGateWrites = ownWrites[tollgatev1alpha1.ExtensionGate, *tollgatev1alpha1.ExtensionGate]
)
