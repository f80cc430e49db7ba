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
	// BlockNotWaitedOn: no Subscription of the plan's namespace waits on the plan (lists one
	// of its CSVs as status.currentCSV), so the manager, which acts through Subscriptions,
	// never approves it; the blocker names no CSV.
	BlockNotWaitedOn = "NotWaitedOn"
	// BlockUnreadable: what the plan says of the CSV (a step's manifest, a bundle's
	// properties) does not parse, so what OLM would do with it is unknown; Detail says where.
	BlockUnreadable = "Unreadable"
	// BlockUnattributed: the CSV cannot be attributed to one operator (several packages or
	// Subscription steps, a dependency whose package or name is taken, several replaced
	// CSVs); Detail says which.
	BlockUnattributed = "Unattributed"
	// BlockReplacesUnjudged: the CSV replaces a CSV of the namespace (Replaces) that no
	// Subscription owns and that no decision on the CSV was made on.
	BlockReplacesUnjudged = "ReplacesUnjudged"
	// BlockVersionConflict: the plan gives the CSV several versions (its bundle lookups, its
	// CSV step's spec.version and olm.package property), or one that does not parse; Detail
	// names them and where each was read.
	BlockVersionConflict = "VersionConflict"
	// BlockStep: a CSV step of the plan creates a CSV other than the one it is listed for
	// (Detail says which step and why); the blocker names no CSV.
	BlockStep = "Step"
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
	// Dependency is true when Subscription is the one the plan would create for the CSV.
	Dependency bool `json:"dependency,omitempty"`
	// Replaces is the CSV of the namespace the CSV would replace, when the blocker is about it:
	// Subscription then owns that CSV (or, with BlockReplacesUnjudged, none does).
	Replaces string `json:"replaces,omitempty"`
	// Codes are the Subscription's standing denial codes (BlockDenied); empty when its policy
	// said allowed: false without a denial.
	Codes []string `json:"codes,omitempty"`
	// Detail says what the plan says that holds it (BlockUnreadable, BlockUnattributed,
	// BlockVersionConflict, BlockStep).
	Detail string `json:"detail,omitempty"`
	// From is the CSV of the namespace the denied move replaces, when it is not the installed
	// CSV of Subscription (one further up the replacement chain).
	From string `json:"from,omitempty"`
}

// String is the blocker for a person: "etcd.v2 (ns/etcd: OperatorNotUpgradeable)".
func (b Blocker) String() string {
	switch b.Reason {
	case BlockTooManyOperators:
		return fmt.Sprintf("the plan installs more than %d operators, more than Tollgate judges together: approve it by hand after checking them", MaxBundle)
	case BlockNotWaitedOn:
		return "no Subscription of the plan's namespace waits on it (none lists one of its CSVs as status.currentCSV), so Tollgate does not approve it"
	case BlockNoSubscription:
		return b.CSV + " (no Subscription in the plan's namespace claims it)"
	case BlockUnreadable:
		return fmt.Sprintf("%s (%s)", b.CSV, b.detail())
	case BlockVersionConflict:
		return fmt.Sprintf("%s (VersionConflict: the plan gives it different versions, so which one OLM installs is not known: %s)", b.CSV, b.Detail)
	case BlockStep:
		return "a step creates a CSV no decision covers: " + b.Detail
	case BlockUnattributed:
		return fmt.Sprintf("%s (cannot be attributed to one operator: %s)", b.CSV, b.detail())
	case BlockReplacesUnjudged:
		if b.Detail != "" {
			return fmt.Sprintf("%s (replaces %s, which no Subscription owns: %s)", b.CSV, b.Replaces, b.Detail)
		}
		return fmt.Sprintf("%s (replaces %s, which no Subscription owns and no decision on %s looked at)", b.CSV, b.Replaces, b.CSV)
	}
	who := b.Subscription
	switch {
	case b.Dependency:
		who += ", the Subscription the plan creates for it"
	case b.Replaces != "":
		who += ", which owns " + b.Replaces + " that it replaces"
	case b.From != "":
		who += ", on the move from " + b.From + " up its replacement chain"
	}
	return fmt.Sprintf("%s (%s: %s)", b.CSV, who, b.why())
}

// why is what holds a claimant's or a dependency's decision.
func (b Blocker) why() string {
	switch b.Reason {
	case BlockNoGate:
		return "has no UpgradeGate yet"
	case BlockDenied:
		if len(b.Codes) > 0 {
			return strings.Join(b.Codes, ", ")
		}
		return "its policy does not allow it"
	case BlockAudit:
		return "is in Audit mode"
	case BlockAutomatic:
		ns, name, _ := strings.Cut(b.Subscription, "/")
		return fmt.Sprintf("is Automatic, but this plan is Manual (OLM makes every plan of a namespace Manual when one of its Subscriptions is), so nobody will approve it; make it Manual so that Tollgate gates it: kubectl patch subscription -n %s %s --type merge -p '{\"spec\":{\"installPlanApproval\":\"Manual\"}}'", ns, name)
	}
	return b.Reason
}

// detail is what the plan says that holds it, for a person (BlockUnreadable,
// BlockUnattributed): also a peer's unattributed.
func (b Blocker) detail() string {
	if b.Reason == BlockUnreadable {
		return "what the plan says of it cannot be read: " + b.Detail
	}
	return b.Detail
}
