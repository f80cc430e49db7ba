package tollgate.packs.soak.test

import data.tollgate.packs.soak

# --- input builders ------------------------------------------------------------------------------

_plan(name, created) := {"metadata": {"name": name, "namespace": "operators", "creationTimestamp": created}, "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": ["etcd.v0.9.4"]}, "status": {"phase": "RequiresApproval"}}

# _csv is an end of a move: a CSV of package etcd.
_end(name) := {"name": name, "package": "etcd", "version": null, "versionFrom": "not read by this pack"}

# _move is the move from the CSV named installed ("": a first install) to the one named current,
# as plan install-abc makes it.
_move(installed, current) := {
	"namespace": "operators",
	"installPlan": "install-abc",
	"from": _from(installed),
	"to": object.union(_end(current), {"channel": "alpha", "catalog": {"namespace": "olm", "name": "operatorhubio"}}),
}

_from("") := null

_from(name) := object.union(_end(name), {"phase": "Succeeded", "operatorCondition": null, "owner": {"kind": "Subscription", "namespace": "operators", "name": "etcd"}}) if name != ""

# _input is a Subscription's document at now; it moves from installed to current unless
# nothing is pending (move null). The new CSV object does not exist yet.
_input(now, installed, current, plans) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {
		"metadata": {"name": "etcd", "namespace": "operators"},
		"spec": {"name": "etcd", "channel": "alpha", "source": "operatorhubio", "sourceNamespace": "olm"},
		"status": {"installedCSV": installed, "currentCSV": current},
	},
	"currentCSV": null,
	"installPlan": null,
	"pendingInstallPlans": plans,
	"packageManifest": null,
	"now": now,
	"move": _pending_move(installed, current, plans),
}

_pending_move(installed, installed, []) := null

_pending_move(installed, current, plans) := _move(installed, current) if {
	[installed, plans] != [current, []]
}

_noon := "2024-06-05T12:00:00Z"

_upgrade(now) := _input(now, "etcd.v0.9.2", "etcd.v0.9.4", [_plan("install-abc", "2024-06-05T00:00:00Z")])

_codes(denials) := {d.code | some d in denials}

_csv(created, annotations) := {"metadata": {"name": "etcd.v0.9.4", "namespace": "operators", "creationTimestamp": created, "annotations": annotations}, "spec": {"version": "0.9.4"}}

# --- behaviour -------------------------------------------------------------------------------

_config_command := "kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml"

test_a_fresh_version_is_held_for_a_day_by_default if {
	soak.deny == {{
		"code": "SoakTimeNotElapsed",
		"title": "The new version has not soaked long enough",
		"message": "etcd.v0.9.4 has been known for 12h00m (since 2024-06-05T00:00:00Z, when InstallPlan install-abc was created); it must soak 24h00m, until 2024-06-06T00:00:00Z",
		"facts": [
			"etcd.v0.9.4 is known since 2024-06-05T00:00:00Z, when InstallPlan install-abc was created; it is 2024-06-05T12:00:00Z (input.now)",
			"package etcd must soak 24h00m (the default)",
		],
		"lift": [
			{"text": "wait until 2024-06-06T00:00:00Z, when etcd.v0.9.4 has soaked 24h00m"},
			{
				"text": "or an admin lowers the soak time of package etcd to 12 hours or less (packages.etcd.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):",
				"command": _config_command,
			},
		],
	}} with input as _upgrade(_noon)
}

test_the_soak_fact_names_the_setting_it_comes_from if {
	some d in soak.deny with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"hours": 48}
	d.facts[1] == "package etcd must soak 48h00m (hours in data.tollgate.config.packs.soak)"
	some e in soak.deny with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"hours": 6, "packages": {"etcd": {"hours": 12.5}}}
	e.facts[1] == "package etcd must soak 12h30m (packages.etcd.hours in data.tollgate.config.packs.soak)"
}

test_the_lowered_soak_time_that_lifts_the_hold_is_rounded_down if {
	some d in soak.deny with input as _upgrade("2024-06-05T12:20:30Z")
	startswith(d.lift[1].text, "or an admin lowers the soak time of package etcd to 12.34 hours or less")
}

test_a_soaked_version_passes if {
	count(soak.deny) == 0 with input as _upgrade("2024-06-06T00:00:00Z")
}

test_the_soak_time_is_configurable_globally_and_per_package if {
	count(soak.deny) == 0 with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"hours": 6}
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"hours": 6, "packages": {"etcd": {"hours": 72}}}
	count(soak.deny) == 0 with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"hours": 48, "packages": {"etcd": {"hours": 1.5}}}
}

test_zero_hours_turns_the_soak_off if {
	count(soak.deny) == 0 with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"hours": 0}
}

test_the_earliest_evidence_counts if {
	inp := object.union(_upgrade(_noon), {
		"currentCSV": _csv("2024-06-05T06:00:00Z", {}),
		"pendingInstallPlans": [_plan("install-abc", "2024-06-05T00:00:00Z"), _plan("install-old", "2024-06-04T13:00:00Z")],
	})
	some d in soak.deny with input as inp
	contains(d.message, "known for 23h00m (since 2024-06-04T13:00:00Z, when InstallPlan install-old was created)")
}

test_the_csv_creation_counts if {
	inp := object.union(_upgrade(_noon), {"currentCSV": _csv("2024-06-04T12:30:00Z", {}), "pendingInstallPlans": []})
	some d in soak.deny with input as inp
	contains(d.message, "known for 23h30m (since 2024-06-04T12:30:00Z, when its CSV was created)")
}

test_a_csv_of_another_name_does_not_count if {
	csv := json.patch(_csv("2024-06-01T00:00:00Z", {}), [{"op": "replace", "path": "/metadata/name", "value": "other.v1.0.0"}])
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as object.union(_upgrade(_noon), {"currentCSV": csv})
}

test_the_referenced_plan_counts_when_it_lists_the_new_csv if {
	inp := object.union(_upgrade(_noon), {"installPlan": _plan("install-ref", "2024-06-01T00:00:00Z")})
	count(soak.deny) == 0 with input as inp
	other := json.patch(_plan("install-ref", "2024-06-01T00:00:00Z"), [{"op": "replace", "path": "/spec/clusterServiceVersionNames", "value": ["etcd.v0.9.2"]}])
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as object.union(_upgrade(_noon), {"installPlan": other})
}

test_no_evidence_is_held if {
	soak.deny == {{
		"code": "SoakStartUnknown",
		"title": "No timestamp shows since when the cluster knows the new version",
		"message": "cannot tell since when etcd.v0.9.4 is known (no CSV or InstallPlan with a creationTimestamp), so its soak time of 24h00m cannot be checked",
		"facts": [
			"no CSV or InstallPlan with a creationTimestamp shows since when etcd.v0.9.4 is known",
			"package etcd must soak 24h00m (the default)",
		],
		"lift": [
			{"text": "OLM creates the InstallPlan for etcd.v0.9.4: its creationTimestamp starts the soak time"},
			{
				"text": "or an admin sets the soak time of package etcd to 0 (packages.etcd.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):",
				"command": _config_command,
			},
		],
	}} with input as _input(_noon, "etcd.v0.9.2", "etcd.v0.9.4", [])
}

test_no_evidence_for_a_move_to_an_unnamed_csv_is_held if {
	some d in soak.deny with input as _input(_noon, "etcd.v0.9.2", "", [{"metadata": {"name": "install-abc"}}])
	startswith(d.message, "cannot tell since when the pending install is known")
}

test_published_basis_uses_the_created_at_annotation if {
	inp := object.union(_upgrade(_noon), {"currentCSV": _csv("2024-06-05T06:00:00Z", {"createdAt": "2024-05-01T00:00:00Z"})})
	count(soak.deny) == 0 with input as inp with data.tollgate.config.packs.soak as {"basis": "published"}
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as inp
}

_manifest(created) := {"status": {"channels": [
	{"name": "beta", "currentCSV": "etcd.v1.0.0", "currentCSVDesc": {"annotations": {"createdAt": "2020-01-01T00:00:00Z"}}},
	{"name": "alpha", "currentCSV": "etcd.v0.9.4", "currentCSVDesc": {"annotations": {"createdAt": created}}},
]}}

test_published_basis_reads_common_created_at_layouts if {
	some d in soak.deny with input as object.union(_upgrade(_noon), {"packageManifest": _manifest("2024-06-05 02:00:00")})
		with data.tollgate.config.packs.soak as {"basis": "published"}
	contains(d.message, "known for 10h00m (since 2024-06-05T02:00:00Z, by its createdAt annotation in the PackageManifest)")
	some e in soak.deny with input as object.union(_upgrade(_noon), {"packageManifest": _manifest("2024-06-05")})
		with data.tollgate.config.packs.soak as {"basis": "published"}
	contains(e.message, "known for 12h00m (since 2024-06-05T00:00:00Z, by its createdAt annotation in the PackageManifest)")
}

_published := {"basis": "published"}

test_published_basis_reads_the_layouts_operator_authors_write if {
	every created in [
		"2024-06-05T02:00:00Z", "2024-06-05T02:00:00.000Z", "2024-06-05T04:00:00+02:00",
		"2024-06-05 02:00:00", "2024-06-05T02:00:00", "2024-06-05 02:00:00.5", "2024-06-05 02:00:00Z",
	] {
		some d in soak.deny with input as object.union(_upgrade(_noon), {"currentCSV": _csv("2024-06-05T06:00:00Z", {"createdAt": created})})
			with data.tollgate.config.packs.soak as _published
		d.code == "SoakTimeNotElapsed"
		contains(d.message, "(since 2024-06-05T02:00:00")
		contains(d.message, "by its createdAt annotation)")
	}
}

test_time_ns_reads_known_layouts_and_nothing_else if {
	soak._time_ns("2019-08-19T12:00:00Z") == 1566216000000000000
	soak._time_ns("2019-08-19 12:00:00") == 1566216000000000000
	soak._time_ns("2019-08-19T12:00:00") == 1566216000000000000
	soak._time_ns("2019-08-19T14:00:00+02:00") == 1566216000000000000
	soak._time_ns("2019-08-19") == 1566172800000000000
	soak._time_ns("2020-02-29") == 1582934400000000000
	every bad in [
		null, 20190819, "", "last Tuesday", "2019-08-19T12:00", "2019-02-29", "2019-13-01",
		"2019-08-19 24:00:00", "2019-08-19T12:00:00+24:00", "19-08-19", "1677-01-01", "2262-01-01",
		"2019-08-19t12:00:00z", "Mon Aug 19 12:00:00 UTC 2019", "2019/08/19",
	] {
		not soak._time_ns(bad)
	}
}

test_published_basis_without_created_at_is_held_as_soak_start_unknown if {
	inp := object.union(_upgrade(_noon), {"currentCSV": _csv("2024-06-05T06:00:00Z", {})})
	soak.deny == {{
		"code": "SoakStartUnknown",
		"title": "The new version's createdAt annotation is missing or cannot be read",
		"message": "cannot tell when etcd.v0.9.4 was published (it has no createdAt annotation), so its soak time of 24h00m cannot be checked",
		"facts": [
			"etcd.v0.9.4 has no createdAt annotation, neither on its CSV nor in the PackageManifest",
			"package etcd must soak 24h00m (the default)",
		],
		"lift": [
			{"text": "the operator's author publishes etcd.v0.9.4 with a createdAt annotation in a layout the pack reads: RFC 3339 (2019-08-19T12:00:00Z), 2019-08-19 12:00:00 (UTC) or 2019-08-19 (midnight UTC)"},
			{
				"text": "or an admin sets basis: seen in data.tollgate.config.packs.soak, so that the soak time counts from when the cluster first saw etcd.v0.9.4: since 2024-06-05T00:00:00Z, when InstallPlan install-abc was created, so until 2024-06-06T00:00:00Z (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
				"command": _config_command,
			},
			{
				"text": "or an admin sets the soak time of package etcd to 0 (packages.etcd.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):",
				"command": _config_command,
			},
		],
	}} with input as inp with data.tollgate.config.packs.soak as _published
}

test_an_unreadable_created_at_is_quoted_in_the_facts if {
	inp := object.union(_upgrade(_noon), {
		"currentCSV": _csv("2024-06-05T06:00:00Z", {"createdAt": "last Tuesday"}),
		"packageManifest": _manifest(20240605),
		"pendingInstallPlans": [],
	})
	[d] := [d | some d in soak.deny with input as inp with data.tollgate.config.packs.soak as _published]
	d.code == "SoakStartUnknown"
	d.message == "cannot tell when etcd.v0.9.4 was published (its createdAt annotation is not in a layout the pack reads), so its soak time of 24h00m cannot be checked"
	d.facts == [
		"the createdAt annotation of etcd.v0.9.4 in channel alpha of the PackageManifest is 20240605, which is not in a layout the pack reads: RFC 3339 (2019-08-19T12:00:00Z), 2019-08-19 12:00:00 (UTC) or 2019-08-19 (midnight UTC)",
		"the createdAt annotation of etcd.v0.9.4 on its CSV is \"last Tuesday\", which is not in a layout the pack reads: RFC 3339 (2019-08-19T12:00:00Z), 2019-08-19 12:00:00 (UTC) or 2019-08-19 (midnight UTC)",
		"package etcd must soak 24h00m (the default)",
	]
	startswith(d.lift[1].text, "or an admin sets basis: seen in data.tollgate.config.packs.soak, so that the soak time counts from when the cluster first saw etcd.v0.9.4: since 2024-06-05T06:00:00Z, when its CSV was created")
}

test_a_readable_created_at_wins_over_an_unreadable_one if {
	inp := object.union(_upgrade(_noon), {
		"currentCSV": _csv("2024-06-05T06:00:00Z", {"createdAt": "last Tuesday"}),
		"packageManifest": _manifest("2024-05-01"),
	})
	count(soak.deny) == 0 with input as inp with data.tollgate.config.packs.soak as _published
}

test_without_any_evidence_the_published_basis_offers_no_seen_remedy if {
	[d] := [d | some d in soak.deny with input as _input(_noon, "etcd.v0.9.2", "etcd.v0.9.4", []) with data.tollgate.config.packs.soak as _published]
	d.code == "SoakStartUnknown"
	count(d.lift) == 2
	not contains(d.lift[1].text, "basis: seen")
}

test_timestamps_that_are_not_rfc_3339_are_no_evidence if {
	plans := [_plan("install-abc", null), _plan("install-def", "2024-06-05 00:00:00"), {"metadata": {"name": "install-ghi"}}]
	inp := object.union(_input(_noon, "etcd.v0.9.2", "etcd.v0.9.4", plans), {"currentCSV": _csv("yesterday", {})})
	_codes(soak.deny) == {"SoakStartUnknown"} with input as inp
}

test_first_installs_are_not_held_by_default if {
	count(soak.deny) == 0 with input as _input(_noon, "", "etcd.v0.9.4", [_plan("install-abc", "2024-06-05T00:00:00Z")])
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as _input(_noon, "", "etcd.v0.9.4", [_plan("install-abc", "2024-06-05T00:00:00Z")])
		with data.tollgate.config.packs.soak as {"firstInstall": true}
}

test_nothing_moving_is_not_held if {
	count(soak.deny) == 0 with input as _input(_noon, "etcd.v0.9.4", "etcd.v0.9.4", [])
}

# --- which move: its ends and its plan, whatever the Subscription says -------------------------

# A Subscription deleted and created again reports no installed CSV, while its plan replaces
# etcd.v0.9.2: an upgrade, held as one though first installs are not.
test_a_recreated_subscriptions_move_is_an_upgrade if {
	inp := object.union(_upgrade(_noon), {"subscription": {"status": {"installedCSV": ""}}})
	inp.subscription.status.installedCSV == ""
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as inp
}

# A CSV step that is not listed in spec.clusterServiceVersionNames: the plan that makes the move
# (move.installPlan) still shows when the cluster saw the CSV.
test_the_plan_that_makes_the_move_counts_though_it_does_not_list_the_csv if {
	unlisted := json.patch(_plan("install-abc", "2024-06-01T00:00:00Z"), [{"op": "replace", "path": "/spec/clusterServiceVersionNames", "value": []}])
	count(soak.deny) == 0 with input as object.union(_upgrade(_noon), {"pendingInstallPlans": [unlisted]})
	other := json.patch(unlisted, [{"op": "replace", "path": "/metadata/name", "value": "install-other"}])
	_codes(soak.deny) == {"SoakStartUnknown"} with input as object.union(_upgrade(_noon), {"pendingInstallPlans": [other]})
}

# A move to another CSV than the Subscription's current one (a dependency's step): a plan that
# lists only the current CSV, or the current CSV object, shows nothing about it.
test_evidence_is_about_the_csv_the_move_creates if {
	inp := object.union(_upgrade(_noon), {
		"move": {"installPlan": "install-xyz", "to": {"name": "gamma.v1.0.0", "package": "gamma"}},
		"currentCSV": _csv("2024-06-01T00:00:00Z", {}),
	})
	ds := soak.deny with input as inp
	[d.message | some d in ds] == ["cannot tell since when gamma.v1.0.0 is known (no CSV or InstallPlan with a creationTimestamp), so its soak time of 24h00m cannot be checked"]
	[d.facts[1] | some d in ds] == ["package gamma must soak 24h00m (the default)"]
	gamma_plan := json.patch(_plan("install-xyz", "2024-06-05T06:00:00Z"), [{"op": "replace", "path": "/spec/clusterServiceVersionNames", "value": ["gamma.v1.0.0"]}])
	_codes(soak.deny) == {"SoakTimeNotElapsed"} with input as object.union(inp, {"pendingInstallPlans": [gamma_plan]})
}

test_a_document_without_a_move_is_not_held if {
	count(soak.deny) == 0 with input as object.remove(_upgrade(_noon), ["move"])
	count(soak.deny) == 0 with input as object.union(_upgrade(_noon), {"move": "upgrade"})
}

# A move that lacks its to (Go always writes one) is read with a default, without a built-in error.
test_a_move_without_its_to_is_the_pending_install if {
	[d.message | some d in soak.deny] == ["cannot tell since when the pending install is known (no CSV or InstallPlan with a creationTimestamp), so its soak time of 24h00m cannot be checked"] with input as {"now": _noon, "move": {"namespace": "operators", "from": {"name": "etcd.v0.9.2"}}}
}

# --- configuration errors fail closed ------------------------------------------------------------

_config_error(cfg, now, fragment) if {
	some d in soak.deny with input as _upgrade(now) with data.tollgate.config.packs.soak as cfg
	d.code == "SoakConfigInvalid"
	contains(d.message, fragment)
	_codes(soak.deny) == {"SoakConfigInvalid"} with input as _upgrade(now) with data.tollgate.config.packs.soak as cfg
}

test_a_config_error_is_the_fact_and_fixing_it_the_remedy if {
	some d in soak.deny with input as _upgrade(_noon) with data.tollgate.config.packs.soak as {"basis": "released"}
	d.facts == ["data.tollgate.config.packs.soak: basis is released, want seen or published"]
	d.lift == [{
		"text": "an admin fixes data.tollgate.config.packs.soak as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
		"command": _config_command,
	}]
}

test_config_not_an_object if _config_error(24, _noon, "the configuration is not an object")

test_first_install_not_a_boolean if _config_error({"firstInstall": 1}, _noon, "firstInstall is not a boolean")

test_unknown_basis if _config_error({"basis": "released"}, _noon, "basis is released, want seen or published")

test_packages_not_an_object if _config_error({"packages": []}, _noon, "packages is not an object")

test_negative_hours if _config_error({"hours": -1}, _noon, "hours is -1, want a number of hours, 0 or more")

test_package_hours_not_a_number if _config_error({"packages": {"etcd": {"hours": "72"}}}, _noon, "packages.etcd.hours is 72, want a number")

test_package_settings_not_an_object if _config_error({"packages": {"etcd": 72}}, _noon, "packages.etcd is not an object")

test_unreadable_clock if _config_error({}, "noon", "input.now noon is not an RFC 3339 time")

# --- recheckAt -------------------------------------------------------------------------------

_rechecks(doc, config) := {time.format(at) | some at in ats} if {
	ats := soak.recheck_at with input as doc with data.tollgate.config.packs.soak as config
}

test_recheck_is_the_end_of_the_soak_time if {
	_rechecks(_upgrade(_noon), {}) == {"2024-06-06T00:00:00Z"}
	_rechecks(_upgrade(_noon), {"hours": 1.5, "packages": {"etcd": {"hours": 48}}}) == {"2024-06-07T00:00:00Z"}
}

test_recheck_counts_from_the_published_time if {
	doc := object.union(_upgrade(_noon), {"currentCSV": _csv("2024-06-05T10:00:00Z", {"createdAt": "2024-06-05 11:00:00"})})
	_rechecks(doc, {"basis": "published"}) == {"2024-06-06T11:00:00Z"}
}

test_no_recheck_once_soaked_without_a_start_or_without_a_soak_time if {
	_rechecks(_upgrade("2024-06-06T00:00:00Z"), {}) == set()
	_rechecks(_input(_noon, "etcd.v0.9.2", "etcd.v0.9.4", [_plan("install-abc", "")]), {}) == set()
	_rechecks(_upgrade(_noon), {"hours": 0}) == set()
	_rechecks(_upgrade(_noon), {"hours": "a day"}) == set()
	_rechecks(_input(_noon, "etcd.v0.9.4", "etcd.v0.9.4", []), {}) == set()
}

# --- extension documents -----------------------------------------------------------------------

# _extension is an OLM v1 document: its move goes from the installed bundle (null: none) to the
# candidate (null: nothing moves), in the same shape as OLM v0's.
_extension(installed, candidate) := {
	"apiVersion": "tollgate.dev/extension/v1",
	"extension": {
		"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
		"metadata": {"name": "tollgate-demo"},
		"spec": {"namespace": "demo", "source": {"sourceType": "Catalog", "catalog": {"packageName": "tollgate-demo", "version": "1.0.0"}}},
	},
	"installed": installed,
	"candidate": candidate,
	"catalogs": [], "catalogErrors": [], "operands": [], "gate": null, "config": {},
	"now": "2026-11-22T10:00:00Z",
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

test_an_extension_upgrade_cannot_be_judged_and_is_held if {
	ds := soak.deny with input as _extension(_v100, _v110)
	[[d.code, d.message] | some d in ds] == [[
		"SoakStartUnknown",
		"cannot tell since when version 1.1.0 of package tollgate-demo is known: the extension document of ClusterExtension tollgate-demo carries no timestamp of its successor bundles, so its soak time of 24h00m cannot be checked",
	]]
	count(soak.recheck_at) == 0 with input as _extension(_v100, _v110)
}

test_an_extension_without_soak_time_or_candidate_is_not_held if {
	count(soak.deny) == 0 with input as _extension(_v100, _v110) with data.tollgate.config.packs.soak as {"packages": {"tollgate-demo": {"hours": 0}}}
	count(soak.deny) == 0 with input as _extension(_v100, null)
}

test_an_extension_first_install_only_with_first_install if {
	count(soak.deny) == 0 with input as _extension(null, _v110)
	count(soak.deny) == 1 with input as _extension(null, _v110) with data.tollgate.config.packs.soak as {"firstInstall": true}
}

# An extension document has no evidence of when a version became known, whatever else it holds
# (here a plan an hour old that lists the candidate): OLM v0's rules never stand beside the
# extension's own.
test_an_extension_is_held_only_by_its_own_soak_start_unknown if {
	plan := json.patch(_plan("install-abc", "2026-11-22T09:00:00Z"), [{"op": "replace", "path": "/spec/clusterServiceVersionNames", "value": ["tollgate-demo.v1.1.0"]}])
	inp := object.union(_extension(_v100, _v110), {"pendingInstallPlans": [plan]})
	[d.title | some d in soak.deny] == ["The soak pack cannot tell since when a ClusterExtension's successor is known"] with input as inp
	[d.title | some d in soak.deny] == ["The soak pack cannot tell since when a ClusterExtension's successor is known"] with input as inp with data.tollgate.config.packs.soak as {"basis": "published"}
}
