package tollgate.health_test

import data.tollgate.fixtures_test as f
import data.tollgate.health

_t1 := "2026-11-20T08:00:00Z"

_t2 := "2026-11-21T08:00:00Z"

_t3 := "2026-11-22T08:00:00Z"

# _op is an operand with one condition per type: statuses [Available, Progressing, Degraded].
_op(name, statuses, reason, at) := f.operand(name, [
	f.cond("Available", statuses[0], reason, sprintf("%s available=%s", [name, statuses[0]]), at),
	f.cond("Progressing", statuses[1], reason, sprintf("%s progressing=%s", [name, statuses[1]]), at),
	f.cond("Degraded", statuses[2], reason, sprintf("%s degraded=%s", [name, statuses[2]]), at),
])

_health(operands) := h if {
	h := {c.type: c | some c in health.conditions} with input as f.with_patch({"operands": operands})
}

_statuses(h) := [h.Available.status, h.Progressing.status, h.Degraded.status]

# --- always the three types

test_always_three_types if {
	every doc in [f.base, f.first_install, f.with_patch({"operands": []})] {
		[c.type | some c in health.conditions] == ["Available", "Progressing", "Degraded"] with input as doc
	}
}

# --- the HCO condition matrix: one operand in each documented state passes through

test_matrix_healthy_and_idle if _statuses(_health([_op("a", ["True", "False", "False"], "InstallSucceeded", _t1)])) == ["True", "False", "False"]

test_matrix_functional_upgrading_or_healing if _statuses(_health([_op("a", ["True", "True", "False"], "UpgradeInProgress", _t1)])) == ["True", "True", "False"]

test_matrix_below_capacity_and_healing if _statuses(_health([_op("a", ["True", "True", "True"], "HealInProgress", _t1)])) == ["True", "True", "True"]

test_matrix_failed_needs_a_human if _statuses(_health([_op("a", ["False", "False", "True"], "UpgradeFailed", _t1)])) == ["False", "False", "True"]

test_matrix_failed_and_healing if _statuses(_health([_op("a", ["False", "True", "True"], "HealInProgress", _t1)])) == ["False", "True", "True"]

test_matrix_deploying if _statuses(_health([_op("a", ["False", "True", "False"], "InstallInProgress", _t1)])) == ["False", "True", "False"]

# --- worst status per type

test_worst_available_is_false if {
	h := _health([_op("a", ["True", "False", "False"], "InstallSucceeded", _t1), _op("b", ["False", "False", "False"], "HealFailed", _t1)])
	h.Available.status == "False"
	h.Available.reason == "HealFailed"
}

test_worst_progressing_is_true if {
	# the reference's worst-status table says False; its matrix and HCO's code say True
	h := _health([_op("a", ["True", "False", "False"], "InstallSucceeded", _t1), _op("b", ["True", "True", "False"], "UpgradeInProgress", _t1)])
	h.Progressing.status == "True"
	h.Progressing.reason == "UpgradeInProgress"
}

test_worst_degraded_is_true if {
	h := _health([_op("a", ["True", "False", "True"], "HealFailed", _t1), _op("b", ["True", "False", "False"], "InstallSucceeded", _t2)])
	h.Degraded.status == "True"
	h.Degraded.reason == "HealFailed"
}

test_unknown_is_worse_than_good_and_better_than_bad if {
	h := _health([_op("a", ["Unknown", "Unknown", "Unknown"], "HealInProgress", _t1), _op("b", ["True", "False", "False"], "InstallSucceeded", _t2)])
	_statuses(h) == ["Unknown", "Unknown", "Unknown"]
	h2 := _health([_op("a", ["Unknown", "Unknown", "Unknown"], "HealInProgress", _t1), _op("b", ["False", "True", "True"], "HealFailed", _t2)])
	_statuses(h2) == ["False", "True", "True"]
}

test_an_unrecognised_status_counts_as_unknown if {
	h := _health([_op("a", ["true", "yes", "False"], "Odd", _t1)])
	_statuses(h) == ["Unknown", "Unknown", "False"]
}

test_all_good_reports_the_good_status if {
	h := _health([_op("a", ["True", "False", "False"], "InstallSucceeded", _t1), _op("b", ["True", "False", "False"], "UpgradeSucceeded", _t2)])
	_statuses(h) == ["True", "False", "False"]
	h.Available.reason == "UpgradeSucceeded"
	h.Available.message == "2 of 2 operands report Available=True; most recent: EtcdCluster operators/b: b available=True"
}

# --- operands without conditions

test_an_operand_without_conditions_counts_as_unavailable_and_unknown if {
	h := _health([f.operand("bare", [])])
	_statuses(h) == ["False", "Unknown", "Unknown"]
	every c in [h.Available, h.Progressing, h.Degraded] {
		c.reason == "InstallInvalid"
	}
	h.Available.message == "1 of 1 operands report Available=False; most recent: EtcdCluster operators/bare: reports no Available condition"
}

test_an_operand_without_status_counts_as_unavailable if {
	h := _health([{"kind": "EtcdCluster", "metadata": {"namespace": "operators", "name": "new"}}])
	_statuses(h) == ["False", "Unknown", "Unknown"]
}

test_a_missing_type_takes_the_default_for_that_type if {
	h := _health([f.operand("half", [f.cond("Available", "True", "InstallSucceeded", "", _t1)])])
	_statuses(h) == ["True", "Unknown", "Unknown"]
	h.Available.reason == "InstallSucceeded"
	h.Degraded.reason == "InstallInvalid"
}

test_a_condition_without_reason_gets_install_invalid if {
	h := _health([f.operand("a", [{"type": "Degraded", "status": "True"}])])
	h.Degraded.reason == "InstallInvalid"
	h.Degraded.status == "True"
}

test_an_operand_without_conditions_does_not_mask_a_degraded_one if {
	h := _health([f.operand("bare", []), _op("sick", ["True", "False", "True"], "HealFailed", _t1)])
	h.Degraded.status == "True"
	h.Degraded.reason == "HealFailed"
	contains(h.Degraded.message, "EtcdCluster operators/sick")
}

# --- reason and message: the most recent transition among the worst

test_reason_is_the_most_recent_among_the_worst if {
	h := _health([
		_op("old", ["False", "False", "True"], "HealFailed", _t1),
		_op("new", ["False", "False", "True"], "UpgradeFailed", _t3),
		_op("fine", ["True", "False", "False"], "InstallSucceeded", _t3),
		_op("mid", ["False", "False", "True"], "ConfigurationInvalid", _t2),
	])
	h.Degraded.reason == "UpgradeFailed"
	h.Degraded.message == "3 of 4 operands report Degraded=True; most recent: EtcdCluster operators/new: new degraded=True"
}

test_a_more_recent_better_status_does_not_win if {
	h := _health([_op("bad", ["False", "False", "True"], "HealFailed", _t1), _op("good", ["True", "False", "False"], "HealSucceeded", _t3)])
	h.Degraded.reason == "HealFailed"
}

test_ties_go_to_the_first_operand if {
	h := _health([_op("a", ["True", "True", "False"], "UpgradeInProgress", _t2), _op("b", ["True", "True", "False"], "HealInProgress", _t2)])
	h.Progressing.reason == "UpgradeInProgress"
}

test_a_message_less_condition_ends_cleanly if {
	h := _health([f.operand("quiet", [f.cond("Degraded", "True", "HealFailed", "", _t1)])])
	h.Degraded.message == "1 of 1 operands report Degraded=True; most recent: EtcdCluster operators/quiet"
}

# --- no operands

test_no_operands_and_no_installed_csv_is_unknown if {
	conds := health.conditions with input as f.first_install
	every c in conds {
		c.status == "Unknown"
		c.reason == "InstallInvalid"
	}
}

test_no_operands_with_a_succeeded_csv_is_available_and_idle if {
	h := _health([])
	_statuses(h) == ["True", "False", "False"]
	h.Available.reason == "NoOperands"
	h.Available.message == "etcdoperator.v0.9.2 has no operands in its target namespaces; it is in phase Succeeded"
}

test_no_operands_with_a_failed_csv_is_not_available if {
	conds := health.conditions with input as f.with_patch({"operands": [], "installedCSV": f.csv("etcdoperator.v0.9.2", "Failed")})
	[c.status | some c in conds] == ["False", "False", "False"]
}

test_no_operands_with_an_installing_csv_is_unknown_availability if {
	conds := health.conditions with input as f.with_patch({"operands": [], "installedCSV": f.csv("etcdoperator.v0.9.2", "Installing")})
	[c.status | some c in conds] == ["Unknown", "False", "False"]
}

test_status_helper if health.status("Degraded") == "False" with input as f.base

# --- the operands behind an aggregated status

test_reporting_lists_the_operands_with_a_status_in_input_order if {
	ops := [
		_op("a", ["True", "False", "True"], "HealFailed", _t1),
		_op("b", ["True", "False", "False"], "HealSucceeded", _t2),
		_op("c", ["True", "False", "True"], "HealFailed", _t3),
	]
	r := health.reporting("Degraded", "True") with input as f.with_patch({"operands": ops})
	[x[0] | some x in r] == ["EtcdCluster operators/a", "EtcdCluster operators/c"]
	r[1][1].lastTransitionTime == _t3
}

test_reporting_reads_the_first_condition_of_a_type if {
	op := f.operand("a", [f.cond("Degraded", "False", "HealSucceeded", "", _t1), f.cond("Degraded", "True", "HealFailed", "", _t2)])
	health.reporting("Degraded", "True") == [] with input as f.with_patch({"operands": [op]})
	health.reporting("Degraded", "False") == [["EtcdCluster operators/a", f.cond("Degraded", "False", "HealSucceeded", "", _t1)]] with input as f.with_patch({"operands": [op]})
}

# --- operand kinds Tollgate may not read

_unreadable := [{
	"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster", "resource": "etcdclusters",
	"reason": "Forbidden", "message": "grant list and watch",
}]

test_unreadable_operands_make_health_unknown_with_the_fix if {
	conds := health.conditions with input as f.with_patch({"operands": [], "unreadableOperandKinds": _unreadable})
	[c.status | some c in conds] == ["Unknown", "Unknown", "Unknown"]
	every c in conds {
		c.reason == "OperandsUnreadable"
		contains(c.message, "EtcdCluster (etcd.database.coreos.com/v1beta2)")
		endswith(c.message, ": grant list and watch")
	}
}

test_unreadable_operands_hide_a_good_status if {
	h := {c.type: c | some c in health.conditions} with input as f.with_patch({
		"operands": [_op("a", ["True", "False", "False"], "InstallSucceeded", _t1)],
		"unreadableOperandKinds": _unreadable,
	})
	_statuses(h) == ["Unknown", "Unknown", "Unknown"]
}

test_unreadable_operands_never_hide_the_worst_status if {
	h := {c.type: c | some c in health.conditions} with input as f.with_patch({
		"operands": [_op("a", ["True", "False", "True"], "HealFailed", _t1)],
		"unreadableOperandKinds": _unreadable,
	})
	_statuses(h) == ["Unknown", "Unknown", "True"]
	h.Degraded.reason == "HealFailed"
}
