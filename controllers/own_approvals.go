package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownApprovals remembers the plans this manager approved, by the resourceVersion the
// approval gave them, until that version's event arrives. The approving Subscription's
// status already records the state once approved (afterApproval), so the event re-evaluates
// the other Subscriptions the plan installs, not that one: an approval costs no evaluation
// more.
type ownApprovals struct{ m sync.Map } // plan key → ownApproval

type ownApproval struct {
	resourceVersion string
	by              types.NamespacedName // the Subscription whose reconcile approved it
}

// record notes that the Subscription by approved plan, which is now at its approved version.
func (a *ownApprovals) record(plan client.Object, by types.NamespacedName) {
	a.m.Store(client.ObjectKeyFromObject(plan), ownApproval{resourceVersion: plan.GetResourceVersion(), by: by})
}

// mine says whether plan, as an event shows it, is the approval sub made and nothing since.
// Any other version of the plan ends the memory of it.
func (a *ownApprovals) mine(plan client.Object, sub types.NamespacedName) bool {
	key := client.ObjectKeyFromObject(plan)
	v, ok := a.m.Load(key)
	if !ok {
		return false
	}
	own := v.(ownApproval)
	if own.resourceVersion != plan.GetResourceVersion() {
		a.m.CompareAndDelete(key, v)
		return false
	}
	if own.by != sub {
		return false
	}
	a.m.CompareAndDelete(key, v)
	return true
}
