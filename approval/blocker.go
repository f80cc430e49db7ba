package approval

import (
	"fmt"
	"strings"
)

// Why a CSV holds its plan.
const (
	// BlockNoSubscription: no Subscription in the plan's namespace claims the CSV.
	BlockNoSubscription = "NoSubscription"
	// BlockNoGate: the Subscription has no UpgradeGate yet, so its mode is not known.
	BlockNoGate = "NoGate"
	// BlockDenied: the Subscription's decision does not say allowed: true.
	BlockDenied = "Denied"
	// BlockAudit: the Subscription's gate is in Audit mode, which never approves.
	BlockAudit = "Audit"
	// BlockAutomatic: the Subscription approves automatically; the plan is OLM's.
	BlockAutomatic = "Automatic"
	// BlockTooManyOperators: the plan installs more than MaxBundle operators, more than
	// Tollgate judges together; the blocker names no CSV and the plan is left to a person.
	BlockTooManyOperators = "TooManyOperators"
)

// MaxBundle is the most CSVs a plan may list for Tollgate to judge it. Judging a plan
// evaluates every member's decision with its companions as peers, each evaluation growing with
// the plan: the cost is quadratic in the plan's size (200 members: 400 evaluations, tens of
// seconds on a busy node, for each member's reconcile). A larger plan is held (fail closed)
// without evaluating its members, with a blocker that says so.
const MaxBundle = 64

// Blocker is one CSV that holds an InstallPlan, and why.
type Blocker struct {
	CSV string `json:"csv"`
	// Subscription is the namespace and name of a Subscription that claims the CSV; empty
	// with BlockNoSubscription.
	Subscription string `json:"subscription,omitempty"`
	// Reason is one of the Block* constants.
	Reason string `json:"reason"`
	// Codes are the Subscription's standing denial codes (BlockDenied); empty when its policy
	// said allowed: false without a denial.
	Codes []string `json:"codes,omitempty"`
}

// String is the blocker for a person: "etcd.v2 (ns/etcd: OperatorNotUpgradeable)".
func (b Blocker) String() string {
	var why string
	switch b.Reason {
	case BlockTooManyOperators:
		return fmt.Sprintf("the plan installs more than %d operators, more than Tollgate judges together: approve it by hand after checking them", MaxBundle)
	case BlockNoSubscription:
		return b.CSV + " (no Subscription in the plan's namespace claims it)"
	case BlockNoGate:
		why = "has no UpgradeGate yet"
	case BlockDenied:
		why = "its policy does not allow it"
		if len(b.Codes) > 0 {
			why = strings.Join(b.Codes, ", ")
		}
	case BlockAudit:
		why = "is in Audit mode"
	case BlockAutomatic:
		why = "approves automatically"
	default:
		why = b.Reason
	}
	return fmt.Sprintf("%s (%s: %s)", b.CSV, b.Subscription, why)
}
