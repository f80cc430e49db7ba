package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownApprovals remembers the plans this manager approved, by the resourceVersion the
// approval gave them, until that version's event arrives. The approving reconcile has its
// gate evaluated again after olmStepDelay (approveThen), so the event re-evaluates the other
// Subscriptions the plan installs, not that one: an approval costs no evaluation more.
type ownApprovals struct{ m sync.Map } // plan key → ownApproval

type ownApproval struct {
	resourceVersion string
	by              types.NamespacedName // the Subscription whose reconcile approved it
}

// record notes that the Subscription by approved plan, which is now at its approved version.
func (a *ownApprovals) record(plan client.Object, by types.NamespacedName) {
	a.m.Store(client.ObjectKeyFromObject(plan), ownApproval{resourceVersion: plan.GetResourceVersion(), by: by})
}

// take returns the Subscription whose approval an event showing plan brings back, if it is
// one, and forgets it. An event of an earlier version (still on its way when the approval
// landed) keeps the memory; a deleted plan ends it.
func (a *ownApprovals) take(plan client.Object) (types.NamespacedName, bool) {
	key := client.ObjectKeyFromObject(plan)
	v, ok := a.m.Load(key)
	if !ok || v.(ownApproval).resourceVersion != plan.GetResourceVersion() {
		return types.NamespacedName{}, false
	}
	a.m.CompareAndDelete(key, v)
	return v.(ownApproval).by, true
}

// forget drops what is remembered of plan (it is gone).
func (a *ownApprovals) forget(plan client.Object) { a.m.Delete(client.ObjectKeyFromObject(plan)) }
