package tollgate.packs.freeze.test

import data.tollgate.packs.freeze

# --- input builders ------------------------------------------------------------------------------

_plan := {"metadata": {"name": "install-abc", "namespace": "operators"}, "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": ["etcd.v0.9.4"]}, "status": {"phase": "RequiresApproval"}}

# _csv is an end of a move: a CSV of package etcd.
_csv(name) := {"name": name, "package": "etcd", "version": null, "versionFrom": "not read by this pack"}

# _move is the move from the CSV named installed ("": a first install) to the one named current,
# as plan install-abc makes it.
_move(installed, current) := {
	"namespace": "operators",
	"installPlan": "install-abc",
	"from": _from(installed),
	"to": object.union(_csv(current), {"channel": "alpha", "catalog": {"namespace": "olm", "name": "operatorhubio"}}),
}

_from("") := null

_from(name) := object.union(_csv(name), {"phase": "Succeeded", "operatorCondition": null, "owner": {"kind": "Subscription", "namespace": "operators", "name": "etcd"}}) if name != ""

# _input is a Subscription's document at now; it moves from installed to current unless
# nothing is pending (move null).
_input(now, installed, current, plans) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {
		"metadata": {"name": "etcd", "namespace": "operators"},
		"spec": {"name": "etcd", "channel": "alpha", "source": "operatorhubio", "sourceNamespace": "olm"},
		"status": {"installedCSV": installed, "currentCSV": current},
	},
	"pendingInstallPlans": plans,
	"now": now,
	"move": _pending_move(installed, current, plans),
}

_pending_move(installed, installed, []) := null

_pending_move(installed, current, plans) := _move(installed, current) if {
	[installed, plans] != [current, []]
}

_upgrade(now) := _input(now, "etcd.v0.9.2", "etcd.v0.9.4", [_plan])

_holidays := {"start": "2024-12-20T00:00:00Z", "end": "2025-01-06T00:00:00+01:00", "reason": "end-of-year freeze (CHG-1234)"}

_cfg(periods) := {"periods": periods}

_codes(denials) := {d.code | some d in denials}

# --- behaviour -------------------------------------------------------------------------------

test_no_configuration_holds_nothing if {
	count(freeze.deny) == 0 with input as _upgrade("2024-12-24T12:00:00Z")
}

_config_command := "kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml"

_end_period := {
	"text": "or an admin ends or removes the period in data.tollgate.config.packs.freeze.periods (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
	"command": _config_command,
}

# _said are the [code, message] of denials.
_said(denials) := {[d.code, d.message] | some d in denials}

test_an_upgrade_during_a_freeze_is_held if {
	freeze.deny == {{
		"code": "ChangeFreeze",
		"title": "A change freeze is in force",
		"message": "the upgrade to etcd.v0.9.4 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)",
		"facts": ["the change freeze from 2024-12-20T00:00:00Z until 2025-01-06T00:00:00+01:00 is in force at 2024-12-24T12:00:00Z (input.now): end-of-year freeze (CHG-1234)"],
		"lift": [{"text": "wait until 2025-01-06T00:00:00+01:00, when this freeze ends"}, _end_period],
	}} with input as _upgrade("2024-12-24T12:00:00Z")
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_the_start_is_inside_and_the_end_outside_a_freeze if {
	_codes(freeze.deny) == {"ChangeFreeze"} with input as _upgrade("2024-12-20T00:00:00Z") with data.tollgate.config.packs.freeze as _cfg([_holidays])
	count(freeze.deny) == 0 with input as _upgrade("2025-01-05T23:00:00Z") with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_before_and_after_a_freeze_nothing_is_held if {
	count(freeze.deny) == 0 with input as _upgrade("2024-12-19T23:59:59Z") with data.tollgate.config.packs.freeze as _cfg([_holidays])
	count(freeze.deny) == 0 with input as _upgrade("2025-02-01T00:00:00Z") with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_every_freeze_in_force_is_reported if {
	periods := [_holidays, {"start": "2024-12-23T00:00:00Z", "end": "2024-12-27T00:00:00Z"}]
	_said(freeze.deny) == {
		["ChangeFreeze", "the upgrade to etcd.v0.9.4 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)"],
		["ChangeFreeze", "the upgrade to etcd.v0.9.4 is frozen until 2024-12-27T00:00:00Z: change freeze"],
	} with input as _upgrade("2024-12-24T12:00:00Z")
		with data.tollgate.config.packs.freeze as _cfg(periods)
}

test_first_installs_are_held_by_default if {
	_said(freeze.deny) == {["ChangeFreeze", "the install of etcd.v0.9.4 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)"]} with input as _input("2024-12-24T12:00:00Z", "", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_a_held_first_install_can_also_be_let_through_by_first_install_false if {
	some d in freeze.deny with input as _input("2024-12-24T12:00:00Z", "", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
	d.lift == [
		{"text": "wait until 2025-01-06T00:00:00+01:00, when this freeze ends"},
		_end_period,
		{
			"text": "or an admin sets firstInstall: false in data.tollgate.config.packs.freeze, so that freezes let first installs through:",
			"command": _config_command,
		},
	]
}

test_first_installs_pass_when_configured if {
	count(freeze.deny) == 0 with input as _input("2024-12-24T12:00:00Z", "", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.freeze as {"periods": [_holidays], "firstInstall": false}
}

test_nothing_moving_is_not_held if {
	count(freeze.deny) == 0 with input as _input("2024-12-24T12:00:00Z", "etcd.v0.9.4", "etcd.v0.9.4", [])
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

# A move whose new CSV has no name (Go always names it) is still held.
test_a_move_to_an_unnamed_csv_is_held if {
	some d in freeze.deny with input as _input("2024-12-24T12:00:00Z", "etcd.v0.9.4", "", [_plan])
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
	startswith(d.message, "the pending install is frozen")
}

test_a_freeze_for_other_namespaces_or_packages_does_not_hold if {
	count(freeze.deny) == 0 with input as _upgrade("2024-12-24T12:00:00Z")
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["prod"]})])
	count(freeze.deny) == 0 with input as _upgrade("2024-12-24T12:00:00Z")
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"packages": ["postgres"]})])
}

test_a_freeze_for_this_namespace_and_package_holds if {
	_codes(freeze.deny) == {"ChangeFreeze"} with input as _upgrade("2024-12-24T12:00:00Z")
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["operators"], "packages": ["etcd"]})])
}

# --- configuration errors fail closed ------------------------------------------------------------

_config_error(cfg, now, fragment) if {
	some d in freeze.deny with input as _upgrade(now) with data.tollgate.config.packs.freeze as cfg
	d.code == "FreezeConfigInvalid"
	contains(d.message, fragment)
	_codes(freeze.deny) == {"FreezeConfigInvalid"} with input as _upgrade(now) with data.tollgate.config.packs.freeze as cfg
}

test_a_config_error_is_the_fact_and_fixing_it_the_remedy if {
	some d in freeze.deny with input as _upgrade("2024-12-24T12:00:00Z") with data.tollgate.config.packs.freeze as {"periods": _holidays}
	d.facts == ["data.tollgate.config.packs.freeze: periods is not a list"]
	d.lift == [{
		"text": "an admin fixes data.tollgate.config.packs.freeze as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
		"command": _config_command,
	}]
}

test_config_not_an_object if _config_error([_holidays], "2024-12-24T12:00:00Z", "the configuration is not an object")

test_periods_not_a_list if _config_error({"periods": _holidays}, "2024-12-24T12:00:00Z", "periods is not a list")

test_first_install_not_a_boolean if _config_error({"periods": [_holidays], "firstInstall": "no"}, "2024-12-24T12:00:00Z", "firstInstall is not a boolean")

test_period_not_an_object if _config_error(_cfg(["christmas"]), "2024-12-24T12:00:00Z", "periods[0] is not an object")

test_bad_start if _config_error(_cfg([object.union(_holidays, {"start": "2024-12-20"})]), "2024-12-24T12:00:00Z", "periods[0].start is 2024-12-20, want an RFC 3339 time")

test_missing_end if _config_error(_cfg([{"start": "2024-12-20T00:00:00Z"}]), "2024-12-24T12:00:00Z", "periods[0].end is null")

test_end_before_start if _config_error(_cfg([object.union(_holidays, {"end": "2024-12-01T00:00:00Z"})]), "2024-12-24T12:00:00Z", "periods[0] ends (2024-12-01T00:00:00Z) before it starts (2024-12-20T00:00:00Z)")

test_packages_not_a_list if _config_error(_cfg([object.union(_holidays, {"packages": "etcd"})]), "2024-12-24T12:00:00Z", "periods[0].packages is not a list")

test_reason_not_a_string if _config_error(_cfg([object.union(_holidays, {"reason": 42})]), "2024-12-24T12:00:00Z", "periods[0].reason is not a string")

test_unreadable_clock if _config_error(_cfg([_holidays]), "Christmas Eve", "input.now Christmas Eve is not an RFC 3339 time")

test_time_reads_rfc_3339_and_nothing_else if {
	freeze._time("2024-12-20T00:00:00Z") == 1734652800000000000
	freeze._time("2024-12-20T01:00:00.5+01:00") == 1734652800500000000
	every bad in [null, 1734652800, "", "2024-12-20", "2024-12-20 00:00:00", "2024-02-30T00:00:00Z", "2024-12-20T24:00:00Z", "1677-12-31T00:00:00Z", "2262-01-01T00:00:00Z"] {
		not freeze._time(bad)
	}
}

test_periods_that_are_not_objects_hold_nothing_but_the_config_error if {
	_codes(freeze.deny) == {"FreezeConfigInvalid"} with input as _upgrade("2024-12-24T12:00:00Z") with data.tollgate.config.packs.freeze as _cfg([_holidays, 42])
}

test_a_period_list_that_is_not_a_list_is_reported_with_an_unreadable_clock if {
	msgs := {d.message | some d in freeze.deny with input as _upgrade("noon") with data.tollgate.config.packs.freeze as {"periods": 42}}
	count([m | some m in msgs; contains(m, "periods is not a list")]) == 1
	count([m | some m in msgs; contains(m, "input.now noon is not an RFC 3339 time")]) == 1
}

# --- recheckAt -------------------------------------------------------------------------------

# _rechecks are the instants the pack reports for an upgrade at now, as RFC 3339 UTC times.
_rechecks(now, periods) := {time.format(at) | some at in ats} if {
	ats := freeze.recheck_at with input as _upgrade(now) with data.tollgate.config.packs.freeze as _cfg(periods)
}

test_recheck_before_a_freeze_is_its_start_then_its_end if {
	_rechecks("2024-12-01T00:00:00Z", [_holidays]) == {"2024-12-20T00:00:00Z", "2025-01-05T23:00:00Z"}
}

test_recheck_during_a_freeze_is_its_end if {
	_rechecks("2024-12-24T12:00:00Z", [_holidays]) == {"2025-01-05T23:00:00Z"}
}

test_no_recheck_after_a_freeze if {
	_rechecks("2025-01-06T00:00:00Z", [_holidays]) == set()
}

test_recheck_names_every_freeze_to_come if {
	later := {"start": "2025-03-01T00:00:00Z", "end": "2025-03-02T00:00:00Z"}
	_rechecks("2024-12-24T12:00:00Z", [_holidays, later]) == {"2025-01-05T23:00:00Z", "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z"}
}

test_no_recheck_when_the_pack_holds_nothing if {
	count(freeze.recheck_at) == 0 with input as _input("2024-12-01T00:00:00Z", "etcd.v0.9.4", "etcd.v0.9.4", []) with data.tollgate.config.packs.freeze as _cfg([_holidays])
	count(freeze.recheck_at) == 0 with input as _upgrade("2024-12-01T00:00:00Z") with data.tollgate.config.packs.freeze as _cfg([{"start": "2024-12-20T00:00:00Z", "end": "soon"}])
	count(freeze.recheck_at) == 0 with input as _upgrade("2024-12-01T00:00:00Z") with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["other"]})])
}

# --- which move: its ends, whatever the Subscription says ---------------------------------------

_at_christmas := "2024-12-24T12:00:00Z"

# A Subscription deleted and created again reports no installed CSV, while its plan replaces
# etcd.v0.9.2: an upgrade, held as one even where first installs pass.
test_a_recreated_subscriptions_move_is_an_upgrade if {
	inp := object.union(_upgrade(_at_christmas), {"subscription": {"status": {"installedCSV": ""}}})
	inp.subscription.status.installedCSV == ""
	ds := freeze.deny with input as inp with data.tollgate.config.packs.freeze as {"periods": [_holidays], "firstInstall": false}
	[d.message | some d in ds] == ["the upgrade to etcd.v0.9.4 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)"]
	[count(d.lift) | some d in ds] == [2]
}

# A CSV step of a plan (a new dependency, gamma) that replaces a CSV of package etcd: replacing
# a CSV of a frozen package is a change to that package.
_replacing_etcd := object.union(_upgrade(_at_christmas), {"move": {"to": {"name": "gamma.v1.0.0", "package": "gamma"}}})

test_replacing_a_csv_of_a_frozen_package_is_held if {
	ds := freeze.deny with input as _replacing_etcd
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"packages": ["etcd"]})])
	[d.message | some d in ds] == ["the upgrade to gamma.v1.0.0 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)"]
	[d.facts | some d in ds] == [[
		"the change freeze from 2024-12-20T00:00:00Z until 2025-01-06T00:00:00+01:00 is in force at 2024-12-24T12:00:00Z (input.now): end-of-year freeze (CHG-1234)",
		"the freeze covers package etcd, whose CSV etcd.v0.9.2 the move replaces",
	]]
}

test_a_freeze_of_the_package_moved_to_holds_without_naming_the_replaced_one if {
	ds := freeze.deny with input as _replacing_etcd
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"packages": ["gamma", "etcd"]})])
	[count(d.facts) | some d in ds] == [1]
}

test_a_freeze_of_neither_package_does_not_hold_the_replacement if {
	count(freeze.deny) == 0 with input as _replacing_etcd
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"packages": ["postgres"]})])
	count(freeze.deny) == 0 with input as json.patch(_replacing_etcd, [{"op": "replace", "path": "/move/from/package", "value": ""}])
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"packages": [""]})])
}

# The namespace is the move's: where the operator runs.
test_a_freeze_selects_the_moves_namespace if {
	inp := object.union(_upgrade(_at_christmas), {"move": {"namespace": "shop"}})
	_codes(freeze.deny) == {"ChangeFreeze"} with input as inp
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["shop"]})])
	count(freeze.deny) == 0 with input as inp
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["operators"]})])
}

# A move that lacks its to (Go always writes one) is read with a default, without a built-in error.
test_a_move_without_its_to_is_still_held if {
	[d.message | some d in freeze.deny] == ["the pending install is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)"] with input as {"now": _at_christmas, "move": {"namespace": "operators", "from": null}}
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_a_document_without_a_move_is_not_held if {
	count(freeze.deny) == 0 with input as object.remove(_upgrade(_at_christmas), ["move"])
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
	count(freeze.deny) == 0 with input as object.union(_upgrade(_at_christmas), {"move": "upgrade"})
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

# --- extension documents -----------------------------------------------------------------------

# _extension is an OLM v1 document: its move goes from the installed bundle (null: none) to the
# candidate (null: nothing moves), in the same shape as OLM v0's.
_extension(now, installed, candidate) := {
	"apiVersion": "tollgate.dev/extension/v1",
	"extension": {
		"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
		"metadata": {"name": "tollgate-demo"},
		"spec": {"namespace": "demo", "source": {"sourceType": "Catalog", "catalog": {"packageName": "tollgate-demo", "version": "1.0.0"}}},
	},
	"installed": installed,
	"candidate": candidate,
	"catalogs": [], "catalogErrors": [], "operands": [], "gate": null, "config": {},
	"now": now,
	"move": _extension_move(installed, candidate),
}

_extension_move(_, null) := null

_extension_move(installed, candidate) := {
	"namespace": "demo",
	"installPlan": null,
	"from": _installed_end(installed),
	"to": {
		"name": candidate.name, "package": candidate.package, "version": candidate.version,
		"versionFrom": "ClusterCatalog demo-catalog (the bundle's olm.package property)",
		"channel": "stable", "catalog": {"namespace": "", "name": "demo-catalog"},
	},
} if candidate != null

_installed_end(null) := null

_installed_end(installed) := {
	"name": installed.name, "package": "tollgate-demo", "version": installed.version,
	"versionFrom": "status.install.bundle of ClusterExtension tollgate-demo",
	"phase": "", "operatorCondition": null, "owner": {"kind": "ClusterExtension", "name": "tollgate-demo"},
} if installed != null

_v100 := {"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}

_v110 := {"name": "tollgate-demo.v1.1.0", "package": "tollgate-demo", "version": "1.1.0", "catalog": "demo-catalog", "channels": ["stable"], "deprecations": []}

test_an_extension_upgrade_during_a_freeze_is_held if {
	freeze.deny == {{
		"code": "ChangeFreeze",
		"title": "A change freeze is in force",
		"message": "the upgrade of ClusterExtension tollgate-demo to 1.1.0 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)",
		"facts": ["the change freeze from 2024-12-20T00:00:00Z until 2025-01-06T00:00:00+01:00 is in force at 2024-12-24T12:00:00Z (input.now): end-of-year freeze (CHG-1234)"],
		"lift": [{"text": "wait until 2025-01-06T00:00:00+01:00, when this freeze ends"}, _end_period],
	}} with input as _extension("2024-12-24T12:00:00Z", _v100, _v110)
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
	freeze.recheck_at == {time.parse_rfc3339_ns("2025-01-06T00:00:00+01:00")} with input as _extension("2024-12-24T12:00:00Z", _v100, _v110)
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_an_extension_without_a_candidate_is_not_held if {
	count(freeze.deny) == 0 with input as _extension("2024-12-24T12:00:00Z", _v100, null) with data.tollgate.config.packs.freeze as _cfg([_holidays])
}

test_an_extension_first_install_is_held_by_default if {
	[d.message | some d in freeze.deny] == ["the install of ClusterExtension tollgate-demo at 1.1.0 is frozen until 2025-01-06T00:00:00+01:00: end-of-year freeze (CHG-1234)"] with input as _extension("2024-12-24T12:00:00Z", null, _v110)
		with data.tollgate.config.packs.freeze as _cfg([_holidays])
	count(freeze.deny) == 0 with input as _extension("2024-12-24T12:00:00Z", null, _v110)
		with data.tollgate.config.packs.freeze as {"periods": [_holidays], "firstInstall": false}
}

test_an_extension_period_selects_by_install_namespace_and_package if {
	_codes(freeze.deny) == {"ChangeFreeze"} with input as _extension("2024-12-24T12:00:00Z", _v100, _v110)
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["demo"], "packages": ["tollgate-demo"]})])
	count(freeze.deny) == 0 with input as _extension("2024-12-24T12:00:00Z", _v100, _v110)
		with data.tollgate.config.packs.freeze as _cfg([object.union(_holidays, {"namespaces": ["operators"]})])
}
