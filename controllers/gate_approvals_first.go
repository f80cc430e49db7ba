package controllers

import (
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// approvalQuiet is how long after the last Subscription queued for an approval the approvals
// count as under way; maxApprovalWait is the longest an evaluation waits for them in all.
const (
	approvalQuiet   = 500 * time.Millisecond
	maxApprovalWait = 5 * time.Second
)

// approvalsFirst keeps the evaluations that can approve nothing out of the way of approvals
// under way. On a node's few cores, shared with the API server, each evaluation and the status
// write that follows it delay the approvals queued behind them: a catalog flip or an operator's
// release queues hundreds of approvals within seconds, and two seconds after each approval its
// gate is evaluated again for its status (approveThen). The priority queue orders what is
// waiting; this keeps the status work from starting while approvals keep coming.
type approvalsFirst struct {
	last   atomic.Int64 // unix nanoseconds of the last Subscription queued for an approval
	waited              // since when each gate's evaluation waits
}

// queue queues req ahead of other work (approvalPriority) and notes that approvals are under
// way. The machine's clock, not the policies' (GateReconciler.Now): this is about the work
// the manager has.
func (a *approvalsFirst) queue(q queue, req reconcile.Request) {
	a.last.Store(time.Now().UnixNano())
	addAt(q, req, approvalPriority)
}

// wait says how much longer the evaluation of key may wait for the approvals under way (zero:
// evaluate now). The caller asks only for an evaluation that approves nothing and whose gate
// already has a decision by the policies in service; a first decision, or one under new
// policies, never waits.
func (a *approvalsFirst) wait(key types.NamespacedName, now time.Time) time.Duration {
	quietIn := time.Unix(0, a.last.Load()).Add(approvalQuiet).Sub(now)
	return min(max(quietIn, 0), a.hold(key, quietIn > 0, maxApprovalWait, now))
}
