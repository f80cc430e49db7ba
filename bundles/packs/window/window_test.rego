package tollgate.packs.window.test

import data.tollgate.packs.window

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

_weekend := {"windows": [{"days": ["Sat", "Sun"], "start": "02:00", "end": "06:00", "timeZone": "Europe/Berlin"}]}

_codes(denials) := {d.code | some d in denials}

# 2024-06-05 is a Wednesday; Berlin is UTC+2 in June.
_wednesday_noon := "2024-06-05T12:00:00Z"

_saturday_3am_berlin := "2024-06-08T01:00:00Z"

# --- behaviour -------------------------------------------------------------------------------

test_no_configuration_holds_nothing if {
	count(window.deny) == 0 with input as _upgrade(_wednesday_noon)
}

test_no_windows_holds_nothing if {
	count(window.deny) == 0 with input as _upgrade(_wednesday_noon) with data.tollgate.config.packs.window as {"windows": []}
}

test_upgrade_inside_a_window_is_allowed if {
	count(window.deny) == 0 with input as _upgrade(_saturday_3am_berlin) with data.tollgate.config.packs.window as _weekend
}

_config_command := "kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml"

_add_window := {
	"text": "or an admin adds or widens a window in data.tollgate.config.packs.window.windows (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
	"command": _config_command,
}

test_upgrade_outside_every_window_is_held_and_the_next_opening_named if {
	window.deny == {{
		"code": "OutsideMaintenanceWindow",
		"title": "An upgrade is pending while no maintenance window is open",
		"message": "the upgrade to etcd.v0.9.4 waits for a maintenance window: none is open at 2024-06-05T12:00:00Z; the next opens Sat 2024-06-08 02:00 Europe/Berlin, in 2d12h00m",
		"facts": ["none of the maintenance windows of this Subscription is open at 2024-06-05T12:00:00Z (input.now): Sat, Sun 02:00-06:00 Europe/Berlin"],
		"lift": [
			{"text": "wait until the next window opens: Sat 2024-06-08 02:00 Europe/Berlin, in 2d12h00m"},
			_add_window,
		],
	}} with input as _upgrade(_wednesday_noon)
		with data.tollgate.config.packs.window as _weekend
}

test_the_fact_lists_every_window_of_the_subscription if {
	cfg := {"windows": [
		{"days": ["sunday", "Mon"], "start": "02:00", "end": "04:00"},
		{"start": "22:00", "end": "23:00", "timeZone": "Europe/Berlin"},
		{"days": ["Tue"], "start": "01:00", "end": "02:00", "namespaces": ["prod"]},
	]}
	some d in window.deny with input as _upgrade(_wednesday_noon) with data.tollgate.config.packs.window as cfg
	d.facts == ["none of the maintenance windows of this Subscription is open at 2024-06-05T12:00:00Z (input.now): Mon, Sun 02:00-04:00 UTC; every day 22:00-23:00 Europe/Berlin"]
}

test_a_held_first_install_can_also_be_let_through_by_first_install_false if {
	some d in window.deny with input as _input(_wednesday_noon, "", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.window as object.union(_weekend, {"firstInstall": true})
	d.lift[2] == {
		"text": "or an admin sets firstInstall: false in data.tollgate.config.packs.window, so that windows hold upgrades only:",
		"command": _config_command,
	}
}

test_the_end_of_a_window_is_outside_it if {
	some d in window.deny with input as _upgrade("2024-06-08T04:00:00Z") with data.tollgate.config.packs.window as _weekend
	d.code == "OutsideMaintenanceWindow"
	contains(d.message, "the next opens Sun 2024-06-09 02:00 Europe/Berlin, in 0d20h00m")
}

test_the_start_of_a_window_is_inside_it if {
	count(window.deny) == 0 with input as _upgrade("2024-06-08T00:00:00Z") with data.tollgate.config.packs.window as _weekend
}

test_a_window_later_today_is_the_next_opening if {
	some d in window.deny with input as _upgrade("2024-06-08T23:30:00Z")
		with data.tollgate.config.packs.window as {"windows": [{"start": "22:00", "end": "23:00"}]}
	contains(d.message, "the next opens Sun 2024-06-09 22:00 UTC, in 0d22h30m")
}

test_overnight_window_is_open_before_midnight if {
	count(window.deny) == 0 with input as _upgrade("2024-06-07T21:00:00Z")
		with data.tollgate.config.packs.window as {"windows": [{"days": ["Fri"], "start": "22:00", "end": "04:00", "timeZone": "Europe/Berlin"}]}
}

test_overnight_window_is_open_after_midnight_on_the_next_day if {
	count(window.deny) == 0 with input as _upgrade("2024-06-07T23:30:00Z")
		with data.tollgate.config.packs.window as {"windows": [{"days": ["Fri"], "start": "22:00", "end": "04:00", "timeZone": "Europe/Berlin"}]}
}

test_overnight_window_is_closed_after_its_end if {
	some d in window.deny with input as _upgrade("2024-06-08T02:30:00Z")
		with data.tollgate.config.packs.window as {"windows": [{"days": ["Fri"], "start": "22:00", "end": "04:00", "timeZone": "Europe/Berlin"}]}
	contains(d.message, "the next opens Fri 2024-06-14 22:00 Europe/Berlin, in 6d17h30m")
}

test_any_open_window_of_several_allows if {
	count(window.deny) == 0 with input as _upgrade(_wednesday_noon)
		with data.tollgate.config.packs.window as {"windows": [
			{"days": ["Sat"], "start": "02:00", "end": "06:00", "timeZone": "Europe/Berlin"},
			{"days": ["wednesday"], "start": "07:00", "end": "09:00", "timeZone": "America/New_York"},
		]}
}

test_the_earliest_opening_of_several_windows_is_named if {
	some d in window.deny with input as _upgrade(_wednesday_noon)
		with data.tollgate.config.packs.window as {"windows": [
			{"days": ["Sat"], "start": "02:00", "end": "06:00", "timeZone": "Europe/Berlin"},
			{"days": ["THU"], "start": "07:00", "end": "09:00", "timeZone": "America/New_York"},
		]}
	contains(d.message, "the next opens Thu 2024-06-06 07:00 America/New_York, in 0d23h00m")
}

test_days_default_to_every_day if {
	count(window.deny) == 0 with input as _upgrade(_wednesday_noon)
		with data.tollgate.config.packs.window as {"windows": [{"start": "11:00", "end": "13:00"}]}
}

test_a_whole_day_window_ends_at_24_00 if {
	count(window.deny) == 0 with input as _upgrade("2024-06-05T23:59:00Z")
		with data.tollgate.config.packs.window as {"windows": [{"days": ["Wed"], "start": "00:00", "end": "24:00"}]}
}

test_nothing_moving_is_not_held if {
	count(window.deny) == 0 with input as _input(_wednesday_noon, "etcd.v0.9.4", "etcd.v0.9.4", [])
		with data.tollgate.config.packs.window as _weekend
}

# A move to the installed CSV's own name (a pending plan that brings it again) is held.
test_a_move_to_the_installed_csv_is_held if {
	_codes(window.deny) == {"OutsideMaintenanceWindow"} with input as _input(_wednesday_noon, "etcd.v0.9.4", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.window as _weekend
}

# A move whose new CSV has no name (Go always names it) is still held.
test_a_move_to_an_unnamed_csv_is_named_as_the_pending_install if {
	some d in window.deny with input as _input(_wednesday_noon, "etcd.v0.9.4", "", [_plan])
		with data.tollgate.config.packs.window as _weekend
	startswith(d.message, "the pending install waits")
}

test_first_install_is_not_held_by_default if {
	count(window.deny) == 0 with input as _input(_wednesday_noon, "", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.window as _weekend
}

test_first_install_is_held_when_configured if {
	_codes(window.deny) == {"OutsideMaintenanceWindow"} with input as _input(_wednesday_noon, "", "etcd.v0.9.4", [_plan])
		with data.tollgate.config.packs.window as object.union(_weekend, {"firstInstall": true})
}

test_a_window_for_other_namespaces_does_not_hold if {
	count(window.deny) == 0 with input as _upgrade(_wednesday_noon)
		with data.tollgate.config.packs.window as {"windows": [object.union(_weekend.windows[0], {"namespaces": ["prod"]})]}
}

test_a_window_for_this_package_holds if {
	_codes(window.deny) == {"OutsideMaintenanceWindow"} with input as _upgrade(_wednesday_noon)
		with data.tollgate.config.packs.window as {"windows": [object.union(_weekend.windows[0], {"namespaces": ["operators"], "packages": ["etcd"]})]}
}

# --- which move: its ends, whatever the Subscription says ---------------------------------------

# A Subscription deleted and created again reports no installed CSV, while its plan replaces
# etcd.v0.9.2: an upgrade, held as one though first installs are not.
test_a_recreated_subscriptions_move_is_an_upgrade if {
	inp := object.union(_upgrade(_wednesday_noon), {"subscription": {"status": {"installedCSV": ""}}})
	inp.subscription.status.installedCSV == ""
	ds := window.deny with input as inp with data.tollgate.config.packs.window as _weekend
	[d.message | some d in ds] == ["the upgrade to etcd.v0.9.4 waits for a maintenance window: none is open at 2024-06-05T12:00:00Z; the next opens Sat 2024-06-08 02:00 Europe/Berlin, in 2d12h00m"]
	[count(d.lift) | some d in ds] == [2]
}

# A CSV step of a plan that installs gamma, replacing a CSV of package etcd, is in gamma's
# windows; the namespace is the move's.
test_a_window_selects_the_package_and_namespace_of_the_move if {
	inp := object.union(_upgrade(_wednesday_noon), {"move": {"namespace": "shop", "to": {"name": "gamma.v1.0.0", "package": "gamma"}}})
	held := {"windows": [object.union(_weekend.windows[0], {"namespaces": ["shop"], "packages": ["gamma"]})]}
	[d.message | some d in window.deny] == ["the upgrade to gamma.v1.0.0 waits for a maintenance window: none is open at 2024-06-05T12:00:00Z; the next opens Sat 2024-06-08 02:00 Europe/Berlin, in 2d12h00m"] with input as inp
		with data.tollgate.config.packs.window as held
	count(window.deny) == 0 with input as inp
		with data.tollgate.config.packs.window as {"windows": [object.union(_weekend.windows[0], {"packages": ["etcd"]})]}
	count(window.deny) == 0 with input as inp
		with data.tollgate.config.packs.window as {"windows": [object.union(_weekend.windows[0], {"namespaces": ["operators"]})]}
}

test_a_document_without_a_move_is_not_held if {
	count(window.deny) == 0 with input as object.remove(_upgrade(_wednesday_noon), ["move"])
		with data.tollgate.config.packs.window as _weekend
	count(window.deny) == 0 with input as object.union(_upgrade(_wednesday_noon), {"move": "upgrade"})
		with data.tollgate.config.packs.window as _weekend
}

# A move that lacks its to (Go always writes one) is read with a default, without a built-in error.
test_a_move_without_its_to_is_still_held if {
	[d.message | some d in window.deny] == ["the pending install waits for a maintenance window: none is open at 2024-06-05T12:00:00Z; the next opens Sat 2024-06-08 02:00 Europe/Berlin, in 2d12h00m"] with input as {"now": _wednesday_noon, "move": {"namespace": "operators", "from": {"name": "etcd.v0.9.2"}}}
		with data.tollgate.config.packs.window as _weekend
}

# --- configuration errors fail closed ------------------------------------------------------------

_config_error(cfg, now, fragment) if {
	some d in window.deny with input as _upgrade(now) with data.tollgate.config.packs.window as cfg
	d.code == "WindowConfigInvalid"
	contains(d.message, fragment)
	not "OutsideMaintenanceWindow" in _codes(window.deny) with input as _upgrade(now) with data.tollgate.config.packs.window as cfg
}

test_a_config_error_is_the_fact_and_fixing_it_the_remedy if {
	some d in window.deny with input as _upgrade(_wednesday_noon) with data.tollgate.config.packs.window as {"windows": "weekends"}
	d.facts == ["data.tollgate.config.packs.window: windows is not a list"]
	d.lift == [{
		"text": "an admin fixes data.tollgate.config.packs.window as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
		"command": _config_command,
	}]
}

test_config_not_an_object if _config_error([], _wednesday_noon, "the configuration is not an object")

test_windows_not_a_list if _config_error({"windows": "Sat"}, _wednesday_noon, "windows is not a list")

test_first_install_not_a_boolean if _config_error(object.union(_weekend, {"firstInstall": "yes"}), _wednesday_noon, "firstInstall is not a boolean")

test_window_not_an_object if _config_error({"windows": ["Sat 02:00"]}, _wednesday_noon, "windows[0] is not an object")

test_bad_start_time if _config_error({"windows": [{"start": "2am", "end": "06:00"}]}, _wednesday_noon, `windows[0].start is 2am, want a time HH:MM`)

test_missing_end_time if _config_error({"windows": [{"start": "02:00"}]}, _wednesday_noon, "windows[0].end is null")

test_unknown_time_zone if _config_error({"windows": [{"start": "02:00", "end": "06:00", "timeZone": "Mars/Olympus"}]}, _wednesday_noon, "windows[0].timeZone Mars/Olympus is not an IANA time zone")

test_local_time_zone_is_refused if _config_error({"windows": [{"start": "02:00", "end": "06:00", "timeZone": "Local"}]}, _wednesday_noon, "windows[0].timeZone Local")

test_days_not_a_list if _config_error({"windows": [{"days": "Sat", "start": "02:00", "end": "06:00"}]}, _wednesday_noon, "windows[0].days is not a list")

test_unknown_day if _config_error({"windows": [{"days": ["Saturnday"], "start": "02:00", "end": "06:00"}]}, _wednesday_noon, "windows[0].days has Saturnday")

test_namespaces_not_a_list if _config_error({"windows": [{"namespaces": "prod", "start": "02:00", "end": "06:00"}]}, _wednesday_noon, "windows[0].namespaces is not a list")

test_unreadable_clock if _config_error(_weekend, "yesterday", "input.now yesterday is not an RFC 3339 time")

test_config_errors_show_even_when_nothing_moves if {
	_codes(window.deny) == {"WindowConfigInvalid"} with input as _input(_wednesday_noon, "etcd.v0.9.4", "etcd.v0.9.4", [])
		with data.tollgate.config.packs.window as {"windows": "Sat"}
}

test_a_malformed_time_zone_name_is_refused_before_time_clock_sees_it if {
	every tz in ["Europe/ Berlin", "../etc/passwd", "/UTC", "Europe//Berlin", 42] {
		_config_error({"windows": [{"start": "02:00", "end": "06:00", "timeZone": tz}]}, _wednesday_noon, sprintf("windows[0].timeZone %v is not an IANA time zone", [tz]))
	}
}

test_well_formed_time_zones_are_known if {
	every tz in ["UTC", "", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "EST5EDT"] {
		count(window.deny) == 0 with input as _upgrade(_wednesday_noon) with data.tollgate.config.packs.window as {"windows": [{"start": "00:00", "end": "24:00", "timeZone": tz}]}
	}
}

test_windows_that_are_not_objects_hold_nothing_but_the_config_error if {
	_codes(window.deny) == {"WindowConfigInvalid"} with input as _upgrade(_wednesday_noon) with data.tollgate.config.packs.window as {"windows": [{"start": "00:00", "end": "24:00"}, 42]}
}

test_a_clock_that_is_not_rfc_3339_is_a_config_error_only_with_windows if {
	count(window.deny) == 0 with input as _upgrade("2024-06-05 12:00:00") with data.tollgate.config.packs.window as {"windows": []}
	_config_error(_weekend, "2024-06-05 12:00:00", "input.now 2024-06-05 12:00:00 is not an RFC 3339 time")
	_config_error(_weekend, "2024-02-30T12:00:00Z", "input.now 2024-02-30T12:00:00Z is not an RFC 3339 time")
}

# --- recheckAt -------------------------------------------------------------------------------

# _next is the earliest instant the pack reports for an upgrade at now (the pack reports only
# instants after now; tollgate.main keeps the earliest).
_next(now, config) := time.format(min(ats)) if {
	ats := window.recheck_at with input as _upgrade(now) with data.tollgate.config.packs.window as config
	every at in ats {
		at > time.parse_rfc3339_ns(now)
	}
}

test_recheck_outside_a_window_is_its_next_opening if {
	# Sat 02:00 in Berlin (UTC+2 in June)
	_next(_wednesday_noon, _weekend) == "2024-06-08T00:00:00Z"
}

test_recheck_inside_a_window_is_its_closing if {
	# Sat 06:00 in Berlin
	_next(_saturday_3am_berlin, _weekend) == "2024-06-08T04:00:00Z"
}

test_recheck_inside_a_window_past_midnight_is_its_closing_the_next_day if {
	# Sat 01:00 in Berlin, inside Fri 22:00-04:00: it closes Sat 04:00
	_next("2024-06-07T23:00:00Z", {"windows": [{"days": ["Fri"], "start": "22:00", "end": "04:00", "timeZone": "Europe/Berlin"}]}) == "2024-06-08T02:00:00Z"
}

test_recheck_is_the_earliest_edge_of_several_windows if {
	config := {"windows": [
		{"days": ["Sat", "Sun"], "start": "02:00", "end": "06:00", "timeZone": "Europe/Berlin"},
		{"start": "18:00", "end": "24:00", "timeZone": "UTC"},
	]}
	_next(_wednesday_noon, config) == "2024-06-05T18:00:00Z"
	_next("2024-06-05T19:00:00Z", config) == "2024-06-06T00:00:00Z"
}

test_recheck_minds_a_daylight_saving_change_before_the_edge if {
	# Berlin moves from UTC+1 to UTC+2 on Sun 2024-03-31: Sun 05:00 there is 03:00Z
	_next("2024-03-27T12:00:00Z", {"windows": [{"days": ["Sun"], "start": "05:00", "end": "06:00", "timeZone": "Europe/Berlin"}]}) == "2024-03-31T03:00:00Z"

	# and back to UTC+1 on Sun 2024-10-27: Sun 05:00 there is 04:00Z (an early recheck first,
	# then the exact edge from a clock past the change)
	config := {"windows": [{"days": ["Sun"], "start": "05:00", "end": "06:00", "timeZone": "Europe/Berlin"}]}
	_next("2024-10-23T12:00:00Z", config) <= "2024-10-27T04:00:00Z"
	_next("2024-10-27T03:00:00Z", config) == "2024-10-27T04:00:00Z"
}

test_no_recheck_when_the_pack_holds_nothing if {
	count(window.recheck_at) == 0 with input as _input(_wednesday_noon, "etcd.v0.9.4", "etcd.v0.9.4", []) with data.tollgate.config.packs.window as _weekend
	count(window.recheck_at) == 0 with input as _upgrade(_wednesday_noon)
	count(window.recheck_at) == 0 with input as _upgrade(_wednesday_noon) with data.tollgate.config.packs.window as {"windows": [{"start": "25:00", "end": "06:00"}]}
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

test_an_extension_upgrade_outside_every_window_is_held if {
	some d in window.deny with input as _extension(_wednesday_noon, _v100, _v110) with data.tollgate.config.packs.window as _weekend
	d.message == "the upgrade of ClusterExtension tollgate-demo to 1.1.0 waits for a maintenance window: none is open at 2024-06-05T12:00:00Z; the next opens Sat 2024-06-08 02:00 Europe/Berlin, in 2d12h00m"
	d.facts == ["none of the maintenance windows of this ClusterExtension is open at 2024-06-05T12:00:00Z (input.now): Sat, Sun 02:00-06:00 Europe/Berlin"]
	count(window.recheck_at) > 0 with input as _extension(_wednesday_noon, _v100, _v110) with data.tollgate.config.packs.window as _weekend
}

test_an_extension_upgrade_inside_a_window_or_without_a_candidate_is_not_held if {
	count(window.deny) == 0 with input as _extension(_saturday_3am_berlin, _v100, _v110) with data.tollgate.config.packs.window as _weekend
	count(window.deny) == 0 with input as _extension(_wednesday_noon, _v100, null) with data.tollgate.config.packs.window as _weekend
}

test_an_extension_first_install_only_with_first_install if {
	count(window.deny) == 0 with input as _extension(_wednesday_noon, null, _v110) with data.tollgate.config.packs.window as _weekend
	some d in window.deny with input as _extension(_wednesday_noon, null, _v110) with data.tollgate.config.packs.window as object.union(_weekend, {"firstInstall": true})
	startswith(d.message, "the install of ClusterExtension tollgate-demo at 1.1.0 waits")
}

test_an_extension_window_selects_by_install_namespace_and_package if {
	count(window.deny) == 0 with input as _extension(_wednesday_noon, _v100, _v110)
		with data.tollgate.config.packs.window as {"windows": [object.union(_weekend.windows[0], {"namespaces": ["operators"]})]}
	count(window.deny) == 1 with input as _extension(_wednesday_noon, _v100, _v110)
		with data.tollgate.config.packs.window as {"windows": [object.union(_weekend.windows[0], {"namespaces": ["demo"], "packages": ["tollgate-demo"]})]}
}
