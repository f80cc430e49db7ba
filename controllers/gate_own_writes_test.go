package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

func TestTheGateLastWrittenServesUntilTheCacheHasIt(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "etcd"}
	gate := func(rv string) *tollgatev1alpha1.UpgradeGate {
		return &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd", ResourceVersion: rv,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "tollgate"}}}}
	}
	var w upgradeGateWrites
	assert.Equal(t, "1", w.latest(key, gate("1")).ResourceVersion, "nothing written: the cache's")

	w.record(key, "1", gate("2"))
	got := w.latest(key, gate("1"))
	assert.Equal(t, "2", got.ResourceVersion, "the cache still shows what the write replaced: the written one")
	assert.Nil(t, got.ManagedFields, "kept trimmed, as the cache keeps it")

	w.seen(gate("1"))
	assert.Equal(t, "2", w.latest(key, gate("1")).ResourceVersion, "an older version seen changes nothing")
	w.seen(gate("2"))
	assert.Equal(t, "1", w.latest(key, gate("1")).ResourceVersion, "once the cache had the write, the copy is gone")

	w.record(key, "", gate("3"))
	assert.Equal(t, "3", w.latest(key, nil).ResourceVersion, "created, not in the cache yet")
	w.record(key, "3", gate("4"))
	assert.Equal(t, "4", w.latest(key, nil).ResourceVersion,
		"created and its status written, the cache has neither yet: the written one, not a second create")
	assert.Equal(t, "5", w.latest(key, gate("5")).ResourceVersion, "someone else wrote since: the cache's")
	assert.Nil(t, w.latest(key, nil), "and the copy is dropped")

	w.record(key, "", gate("6"))
	w.forgetSeen().Delete(event.DeleteEvent{Object: gate("6")})
	assert.Nil(t, w.latest(key, nil), "a gate the cache saw deleted is forgotten")
}

func TestTheExtensionGateLastWrittenServesItsPin(t *testing.T) {
	key := types.NamespacedName{Name: "argocd"}
	gate := func(rv, pin string) *tollgatev1alpha1.ExtensionGate {
		g := &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: "argocd", ResourceVersion: rv}}
		g.Status.Pin = pin
		return g
	}
	var w extensionGateWrites
	w.record(key, "1", gate("2", "1.1.0"))
	assert.Equal(t, "1.1.0", w.latest(key, gate("1", "1.0.0")).Status.Pin,
		"the cache still shows the status before the pin was recorded: the pin as written")
	w.forgetSeen().Update(event.UpdateEvent{ObjectOld: gate("1", "1.0.0"), ObjectNew: gate("2", "1.1.0")})
	assert.Equal(t, "1.0.0", w.latest(key, gate("1", "1.0.0")).Status.Pin, "once the cache had the write, the copy is gone")
}
