# METADATA
# description: |
#   Worst-status aggregation of the operands' Available, Progressing and Degraded conditions,
#   as the HyperConverged Operator does it (hco-conditions.md), with DESIGN.md's correction:
#   the worst Progressing is True. An operand without a condition counts as Available=False,
#   Progressing=Unknown, Degraded=Unknown with reason InstallInvalid. The aggregated reason is
#   the most recently transitioned one among the operands with the worst status.
package tollgate.health

import data.tollgate.lib

types := ["Available", "Progressing", "Degraded"]

# The order of statuses per type, best first; the last one is the worst.
_order := {
	"Available": ["True", "Unknown", "False"],
	"Progressing": ["False", "Unknown", "True"],
	"Degraded": ["False", "Unknown", "True"],
}

# What an operand that does not report a type counts as (HCO's rule).
_absent_status := {"Available": "False", "Progressing": "Unknown", "Degraded": "Unknown"}

_operands := object.get(input, "operands", [])

# conditions are always the three types.
conditions := [aggregate(t) | some t in types]

# aggregate is the condition of type t over all operands.
aggregate(t) := _no_operands(t) if {
	count(_operands) == 0
} else := _worst(t)

# ----------------------------------------------------------------------------------------------
# With operands.

# _view is what one operand says about type t, with HCO's defaults filled in.
_view(op, t) := {
	"status": _known_status(c.status),
	"reason": lib.or_else(object.get(c, "reason", ""), "InstallInvalid"),
	"message": object.get(c, "message", ""),
	"time": lib.time_ns(object.get(c, "lastTransitionTime", null)),
} if {
	c := lib.condition(lib.conditions(op), t)
} else := {
	"status": _absent_status[t],
	"reason": "InstallInvalid",
	"message": sprintf("reports no %s condition", [t]),
	"time": 0,
}

_known_status(s) := s if s in {"True", "False", "Unknown"}

else := "Unknown"

_rank(t, status) := i if _order[t][i] == status

_views(t) := [object.union(v, {"index": i, "rank": _rank(t, v.status)}) |
	some i, op in _operands
	v := _view(op, t)
]

_worst(t) := {
	"type": t,
	"status": _order[t][worst],
	"reason": chosen.reason,
	"message": trim_suffix(
		sprintf("%d of %d operands report %s=%s; most recent: %s: %s", [
			count(at_worst), count(views), t, _order[t][worst],
			lib.kind_name(_operands[chosen.index]), chosen.message,
		]),
		": ",
	),
} if {
	views := _views(t)
	worst := max([v.rank | some v in views])
	at_worst := [v | some v in views; v.rank == worst]

	# most recent transition first; ties go to the first operand in input order
	latest := sort([[0 - v.time, v.index] | some v in at_worst])[0]
	chosen := views[latest[1]]
}

# ----------------------------------------------------------------------------------------------
# Without operands. No installed CSV: nothing can be observed, all Unknown. An installed CSV
# without instances of its CRDs is normal (no CRs yet): not Progressing, not Degraded, and
# Available follows the CSV's phase so a broken operator is not reported as available.

_csv := input.installedCSV

_no_operands(t) := {
	"type": t,
	"status": "Unknown",
	"reason": "InstallInvalid",
	"message": "no ClusterServiceVersion is installed, so there are no operands to observe",
} if {
	_csv == null
} else := {
	"type": t,
	"status": _available_without_operands,
	"reason": "NoOperands",
	"message": sprintf("%s has no operands in its target namespaces; it is in phase %s", [
		lib.name(_csv),
		lib.or_else(lib.csv_phase, "None"),
	]),
} if {
	t == "Available"
} else := {
	"type": t,
	"status": "False",
	"reason": "NoOperands",
	"message": sprintf("%s has no operands in its target namespaces", [lib.name(_csv)]),
}

_available_without_operands := "True" if {
	lib.csv_phase == "Succeeded"
} else := "False" if {
	lib.csv_phase == "Failed"
} else := "Unknown"

# status is the aggregated status of type t, for other packages.
status(t) := aggregate(t).status
