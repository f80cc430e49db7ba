# METADATA
# description: |
#   Worst-status aggregation of the operands' Available, Progressing and Degraded conditions,
#   as the HyperConverged Operator does it (hco-conditions.md), with DESIGN.md's correction:
#   the worst Progressing is True. An operand without a condition counts as Available=False,
#   Progressing=Unknown, Degraded=Unknown with reason InstallInvalid. The aggregated reason is
#   the most recently transitioned one among the operands with the worst status. Operand kinds
#   Tollgate may not read (input.unreadableOperandKinds) count as operands of unknown status.
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
conditions := [by_type[t] | some t in types] if {
	by_type := _aggregates
}

# aggregate is the condition of type t over all operands. Operands Tollgate may not read make
# it Unknown, unless those it read already show the worst status, which none can improve.
aggregate(t) := _aggregates[t]

# _aggregates are the three conditions by type, computed once per evaluation whoever asks
# (conditions, and tollgate.upgrade through aggregate and status). In the common case, every
# operand readable and reporting each type once (_groups), _regular_conditions has all three;
# without operands that case is not tried (it would look at the operands to find none).
_aggregates := by_type if {
	_operands != []
	count(_unreadable) == 0
	by_type := _regular_conditions
} else := {t: _aggregate(t) | some t in types}

_aggregate(t) := _unreadable_condition(t) if {
	count(_unreadable) > 0
	not _worst_is_final(t)
} else := _no_operands(t) if {
	count(_operands) == 0
} else := _worst(t)

# ----------------------------------------------------------------------------------------------
# Operand kinds Tollgate may not read (its RBAC does not grant list and watch): each entry's
# message says what to grant.

_unreadable := object.get(input, "unreadableOperandKinds", [])

_worst_is_final(t) if {
	count(_operands) > 0
	_worst(t).status == _order[t][2]
}

_unreadable_condition(t) := {
	"type": t,
	"status": "Unknown",
	"reason": "OperandsUnreadable",
	"message": sprintf("the operands of %s cannot be read, so their %s status is unknown: %s", [
		concat(", ", [sprintf("%s (%s)", [object.get(k, "kind", ""), object.get(k, "apiVersion", "")]) | some k in _unreadable]),
		t,
		concat("; ", [object.get(k, "message", "") | some k in _unreadable]),
	]),
}

# ----------------------------------------------------------------------------------------------
# With operands. The operands' conditions are indexed by type once (_index); each type then
# takes one pass over the operands (_cells) and one sort, and only the chosen operand's
# condition is looked at again for its reason and message.

# Lookups go through _operand_root so that an operand that is not an object reads as defaults.
_operand_root := {"ops": _operands}

# _conditions[i] is operand i's status.conditions ([] when it has none).
_conditions := [object.get(_operand_root, ["ops", i, "status", "conditions"], []) | some i, _ in _operands]

# _index[i] is operand i's conditions by type; the first condition of a type wins, as in
# lib.condition. When no operand repeats a type (the normal case) an object comprehension per
# operand does it.
_index := [{c.type: c | some c in conds} | some conds in _conditions] if {
	count([c | some conds in _conditions; some c in conds]) == count({[i, c.type] | some i, conds in _conditions; some c in conds})
} else := [{t: c |
	some t in {c.type | some c in conds}
	c := [x | some x in conds; x.type == t][0]
} |
	some conds in _conditions
]

# _absent stands for "no such condition, or one without a status": a set, which no JSON value
# can be.
_absent := set()

# _rank_of[t][status] is the rank of a status for type t (the worst last); _absent ranks as the
# status an operand without the type counts as. A status other than True, False and Unknown
# counts as Unknown.
_rank_of := {t: object.union({s: i | some i, s in order}, {k: r | k := _absent; r := _rank_index[t][_absent_status[t]]}) |
	some t, order in _order
}

# _rank_index[t][status] is the position of status in _order[t].
_rank_index := {
	"Available": {"True": 0, "Unknown": 1, "False": 2},
	"Progressing": {"False": 0, "Unknown": 1, "True": 2},
	"Degraded": {"False": 0, "Unknown": 1, "True": 2},
}

# _kind_name(i) is lib.kind_name of operand i, which may be no object.
_kind_name(i) := lib.kind_name(object.get(_operand_root, ["ops", i], null))

# _object_kind_name(op) is lib.kind_name of an operand known to be an object (one with
# conditions): the common path's, read without the calls lib.kind_name makes.
_object_kind_name(op) := sprintf("%s %s/%s", [
	object.get(op, "kind", "object"),
	object.get(op, ["metadata", "namespace"], ""),
	object.get(op, ["metadata", "name"], ""),
])

# _said(conds, t) is [reason, message] of the first condition of type t in conds, with HCO's
# defaults filled in: a condition without a status counts as none.
_said(conds, t) := [lib.or_else(object.get(c, "reason", ""), "InstallInvalid"), object.get(c, "message", "")] if {
	c := [x | some x in conds; x.type == t][0]
	_ = c.status
} else := ["InstallInvalid", sprintf("reports no %s condition", [t])]

# _worst(t) is the condition of type t over the operands: the common case (_groups) computes
# all three at once.
_worst(t) := c if {
	c := _regular_conditions[t]
} else := {
	"type": t,
	"status": _order[t][pick[1]],
	"reason": reason,
	"message": _worst_message(t, _order[t][pick[1]], pick[2], _kind_name(pick[0]), message),
} if {
	pick := _pick(t)

	# operand pick[0] read as _kind_name reads it
	[reason, message] := _said(object.get(_operand_root, ["ops", pick[0], "status", "conditions"], []), t)
}

# _worst_format is the aggregated condition's message, of both paths (_regular_conditions
# formats it in place: a call to _worst_message per type costs allocations the common path
# need not pay).
_worst_format := "%d of %d operands report %s=%s; most recent: %s: %s"

_worst_message(t, status, n, kind_name, message) := trim_suffix(
	sprintf(_worst_format, [
		n, count(_operands), t, status,
		kind_name, message,
	]),
	": ",
)

# _pick(t) is [operand index, worst rank, how many operands are at the worst rank] for type t.
# The operand reported is, among those at the worst status, the one with the most recent
# transition; ties, and times that do not parse (they count as 0), go to the first operand.
#
# When _groups does not hold for all three types at once, it may still hold for type t alone:
# every operand reports t exactly once with a status and a plain UTC time; then the largest
# [type, rank, time, -index] is the answer. _reports groups every condition of every operand by
# type in one pass.
_pick(t) := [0 - last[3], last[1], count([1 | some c in cells; c[1] == last[1]])] if {
	cells := _reports[t]
	count(cells) == count(_operands)
	count({c[3] | some c in cells}) == count(cells)
	regex.match(_utc_time_list, json.marshal([c[2] | some c in cells]))
	last := max(cells)
} else := [sort(latest)[0][1], worst, count(latest)] if {
	cells := _cells(t)
	worst := max([c[0] | some c in cells])
	latest := [[0 - _cell_ns(c), i] | some i, c in cells; c[0] == worst]
}

# _regular_conditions are what _worst gives in the common case (_groups), for all three types
# at once: a group's last row is the operand to report, and the rows at its rank end the group.
# Those rows are counted by unification ([_, rank, ...] = group[_]), which costs no expression
# per row where a comparison would cost one.
_regular_conditions := {t: {
	"type": t,
	"status": status,
	"reason": reason,
	"message": trim_suffix(
		sprintf(_worst_format, [
			count([1 | [_, rank, _, _, _] = group[_]]), n, t, status,
			_object_kind_name(op), message,
		]),
		": ",
	),
} |
	some t, group in groups
	[_, rank, _, _, op] := group[last]
	status := order[t][rank]
	[reason, message] := _said(op.status.conditions, t)
} if {
	groups := _groups
	n := count(_operands)
	last := n - 1
	order := _order
}

# _groups[t] are the rows of type t, one per operand sorted by rank, time and j, in the common
# case: every operand reports each type exactly once, with a status and a plain UTC RFC 3339
# time (what Kubernetes writes: second precision, "Z"); such times order as their strings do,
# and one pattern match checks them all. (An operand may have other conditions of the type
# without such a status; as in _pick, they do not count.) Sorted, the 3n rows fall into three
# groups of n, Available, Degraded and Progressing; a group's ends show it holds one type only,
# and a set of its j that it holds n operands.
_groups := groups if {
	rows := _rows
	n := count(_operands)
	m := count(rows)
	m == 3 * n
	regex.match(_utc_time_list, json.marshal([ts | some [_, _, ts, _, _] in rows]))
	sorted := sort(rows)
	groups := {t: group |
		some [t, from, to] in [["Available", 0, n], ["Degraded", n, 2 * n], ["Progressing", 2 * n, m]]
		sorted[from][0] == t
		sorted[to - 1][0] == t
		group := array.slice(sorted, from, to)
		count({j | some [_, _, _, j, _] in group}) == n
	}
	count(groups) == 3
}

# _rows are one [type, rank, lastTransitionTime, j, operand] per condition of every operand
# whose type is one of types and whose status is True, False or Unknown, where j is the
# operand's index in _reversed: the larger j, the earlier the operand, so of two rows equal but
# for j the larger is the first operand's, without arithmetic per operand. The rules the loop
# reads are bound to variables first: a rule looked up per condition costs far more; and the
# row is a term of variables only, which costs nothing per condition, where refs in it would
# each cost one more expression.
_rows := rows if {
	ranks := _rank_index
	rows := [[t, rank, ts, j, op] |
		some j, op in _reversed
		some c in op.status.conditions
		t := c.type
		rank := ranks[t][c.status]
		ts := c.lastTransitionTime
	]
}

# _reversed are the operands, last first (none when the operands are not a list).
_reversed := array.reverse(_operands) if is_array(_operands)

# _reports[t] are the [type, rank, time, -index] of the operands' conditions of type t that have
# a status of True, False or Unknown and a string lastTransitionTime (the inner comprehension is
# indexed by type). Any other condition of type t sends the type to the general path.
_reports := {t: [r | some r in _all_reports; r[0] == t] | some t in types}

_all_reports := [[c.type, _rank_index[c.type][c.status], ts, _negated[i]] |
	some i, op in _operands
	some c in op.status.conditions
	ts := c.lastTransitionTime
	is_string(ts)
]

# _negated[i] is -i (a descending range, so no arithmetic per operand).
_negated := numbers.range(0, 1 - count(_operands))

# _cells(t) is one [rank, lastTransitionTime, absent] per operand for type t.
_cells(t) := [[r, ts, st == _absent] |
	some idx in _index
	st := object.get(idx, [t, "status"], _absent)
	r := object.get(_rank_of[t], [st], _rank_index[t].Unknown)
	ts := object.get(idx, [t, "lastTransitionTime"], null)
]

_cell_ns(c) := 0 if c[2]

else := lib.time_ns(c[1])

# _utc_time_list matches the JSON of a non-empty list of UTC times of second precision, each a
# valid date in the years lib.time_ns accepts (February 29 is left to the general path): every
# item is a quoted time followed by a comma, or by the closing bracket that ends the text. No
# string can pass for two times (JSON escapes its quotes). A literal, so that no evaluation
# builds it.
_utc_time_list := `^\[("(1(6(7[89]|[89][0-9])|[7-9][0-9]{2})|2([01][0-9]{2}|2([0-5][0-9]|6[01])))-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z"(,|\]$))+$`

# ----------------------------------------------------------------------------------------------
# Without operands. No installed CSV: nothing can be observed, all Unknown. An installed CSV
# without instances of its CRDs is normal (no CRs yet): not Progressing, not Degraded, and
# Available follows the CSV's phase so a broken operator is not reported as available.

_csv := lib.checked_csv

_no_operands(t) := _extension_no_operands(t) if {
	lib.extension_document
} else := {
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
		lib.or_else(lib.checked_csv_phase, "None"),
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
	lib.checked_csv_phase == "Succeeded"
} else := "False" if {
	lib.checked_csv_phase == "Failed"
} else := "Unknown"

# An extension document without operands: no installed bundle, nothing to observe; an
# installed bundle without instances of the kinds it provides is normal, and Available follows
# the ClusterExtension's Installed condition.
_installed_bundle := object.get(input, ["installed", "name"], "")

_extension_name := lib.name(object.get(input, "extension", null))

_extension_installed_status := s if {
	c := lib.condition(lib.conditions(object.get(input, "extension", null)), "Installed")
	s := object.get(c, "status", "Unknown")
} else := "Unknown"

_extension_no_operands(t) := {
	"type": t,
	"status": "Unknown",
	"reason": "InstallInvalid",
	"message": sprintf("ClusterExtension %s has no installed bundle, so there are no operands to observe", [_extension_name]),
} if {
	object.get(input, "installed", null) == null
} else := {
	"type": t,
	"status": _extension_available_without_operands,
	"reason": "NoOperands",
	"message": sprintf("%s has no operands; ClusterExtension %s reports Installed=%v", [_installed_bundle, _extension_name, _extension_installed_status]),
} if {
	t == "Available"
} else := {
	"type": t,
	"status": "False",
	"reason": "NoOperands",
	"message": sprintf("%s has no operands", [_installed_bundle]),
}

_extension_available_without_operands := s if {
	s := _extension_installed_status
	s in {"True", "False"}
} else := "Unknown"

# reporting(t, status) are [operand ("Kind namespace/name"), condition] for each operand whose
# condition of type t has that status, in input order: the facts behind an aggregated status.
# An operand's first condition of a type is the one that counts, as in the aggregation.
reporting(t, status) := [[_object_kind_name(op), c] |
	some [_, op] in ops
	c := [x | some x in op.status.conditions; x.type == t][0]
	c.status == status
] if {
	# the rows of type t at that rank (by unification, as in _regular_conditions), sorted by j
	# and reversed into input order
	group := _groups[t]
	rank := _rank_index[t][status]
	ops := array.reverse(sort([[j, op] | [_, rank, _, j, op] = group[_]]))
} else := [[_kind_name(i), c] |
	some i, idx in _index
	c := idx[t]
	c.status == status
]

# status is the aggregated status of type t, for other packages.
status(t) := aggregate(t).status

# hold(t, subject) is what a health denial of type t (Degraded or Progressing) says of subject
# (the installed operator) while the aggregated condition of that type is True: its message,
# its facts (one per operand at that status) and the remedy that names those operands;
# undefined otherwise. tollgate.upgrade and tollgate.extension deny with it, under the same
# codes (OperatorDegraded, OperatorProgressing).
hold(t, subject) := {
	"message": sprintf("%s is %s (%s): %s", [subject, t, c.reason, c.message]),
	"facts": [lib.condition_fact(name, x) | some [name, x] in ops],
	"lift": [{"text": sprintf(_hold_lift[t], [concat(", ", [name | some [name, _] in ops])])}],
} if {
	c := aggregate(t)
	c.status == "True"
	ops := reporting(t, "True")
}

_hold_lift := {
	"Degraded": "the operands must report Degraded=False: fix %s, or wait until they heal",
	"Progressing": "wait until the operands finish their work and report Progressing=False (%s)",
}
