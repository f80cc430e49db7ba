package tollgate.packs.version.test

import data.tollgate.packs.version

# --- input builders ------------------------------------------------------------------------------

_plan := {"metadata": {"name": "install-abc", "namespace": "operators"}, "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": ["etcdoperator.v1.0.0"]}, "status": {"phase": "RequiresApproval"}}

# _named is an end of a move whose version Go read from the CSV's name, as its last resort.
_named(name, v) := {"name": name, "package": "etcd", "version": v, "versionFrom": _name_source(name)}

# _etcd is etcdoperator.v<v>, its version read from its name.
_etcd(v) := _named(sprintf("etcdoperator.v%s", [v]), v)

# _bundle_end is an end of a move whose version a bundle gives (from says where).
_bundle_end(name, v, from) := {"name": name, "package": "etcd", "version": v, "versionFrom": from}

# _move is the move from (null: a first install) to, as OLM v0's plan install-abc makes it.
_move(from, to) := {
	"namespace": "operators",
	"installPlan": "install-abc",
	"from": _replaced(from),
	"to": object.union({"channel": "alpha", "catalog": {"namespace": "olm", "name": "operatorhubio"}}, to),
}

_replaced(null) := null

_replaced(from) := object.union({"phase": "Succeeded", "operatorCondition": null, "owner": {"kind": "Subscription", "namespace": "operators", "name": "etcd"}}, from) if from != null

# _input is the Subscription's pending move from (null: a first install) to; the new CSV object
# does not exist yet, as in a cluster where the InstallPlan waits for approval.
_input(from, to) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {
		"metadata": {"name": "etcd", "namespace": "operators"},
		"spec": {"name": "etcd", "channel": "alpha", "source": "operatorhubio", "sourceNamespace": "olm"},
		"status": {"installedCSV": _name_of(from), "currentCSV": to.name},
	},
	"installedCSV": null,
	"currentCSV": null,
	"pendingInstallPlans": [_plan],
	"packageManifest": null,
	"now": "2024-06-05T12:00:00Z",
	"move": _move(from, to),
}

_name_of(null) := ""

_name_of(e) := e.name if e != null

# _upgrade is the pending move from etcdoperator.v<from> to etcdoperator.v<to>.
_upgrade(from, to) := _input(_etcd(from), _etcd(to))

# _name_source is how Go says it read a version from a CSV's name.
_name_source(name) := sprintf("the name %s (no bundle version is known: no spec.version, no olm.package property in the plan, no PackageManifest entry)", [name])

_name_fact(name, v) := sprintf("the version of %s (%s) is read from %s", [name, v, _name_source(name)])

_codes(denials) := {d.code | some d in denials}

_denies(inp, cfg, code) if code in _codes(version.deny) with input as inp with data.tollgate.config.packs.version as cfg

_allows(inp, cfg) if count(version.deny) == 0 with input as inp with data.tollgate.config.packs.version as cfg

# --- major and minor jumps -----------------------------------------------------------------------

_config_command := "kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml"

# _said are the [code, message] of denials.
_said(denials) := {[d.code, d.message] | some d in denials}

# _one is the only denial for inp and cfg.
_one(inp, cfg) := d if {
	[d] := [x | some x in version.deny] with input as inp with data.tollgate.config.packs.version as cfg
}

test_a_major_jump_is_held_by_default if {
	version.deny == {{
		"code": "MajorVersionUpgrade",
		"title": "The upgrade crosses a major version",
		"message": "the upgrade of etcd from 0.9.4 to 1.0.0 crosses a major version; it waits for an admin (override MajorVersionUpgrade on the UpgradeGate) or holdMajor: false",
		"facts": [
			"the upgrade of etcd goes from 0.9.4 (etcdoperator.v0.9.4) to 1.0.0 (etcdoperator.v1.0.0): major version 0 to 1",
			"holdMajor is true for package etcd (the default)",
			_name_fact("etcdoperator.v0.9.4", "0.9.4"),
			_name_fact("etcdoperator.v1.0.0", "1.0.0"),
		],
		"lift": [{
			"text": "an admin sets holdMajor: false for package etcd (packages.etcd.holdMajor in data.tollgate.config.packs.version; the ConfigMaps labelled tollgate.dev/policy=data hold it), which releases all its major upgrades:",
			"command": _config_command,
		}],
	}} with input as _upgrade("0.9.4", "1.0.0")
}

test_the_hold_fact_names_where_the_hold_is_set if {
	_one(_upgrade("0.9.4", "1.0.0"), {"holdMajor": true}).facts[1] == "holdMajor is true for package etcd (holdMajor in data.tollgate.config.packs.version)"
	_one(_upgrade("0.9.4", "1.0.0"), {"holdMajor": false, "packages": {"etcd": {"holdMajor": true}}}).facts[1] == "holdMajor is true for package etcd (packages.etcd.holdMajor in data.tollgate.config.packs.version)"
}

test_a_minor_jump_passes_by_default if {
	count(version.deny) == 0 with input as _upgrade("0.9.4", "0.10.0")
}

test_a_patch_passes_when_minor_jumps_are_held if _allows(_upgrade("0.9.4", "0.9.5"), {"holdMinor": true})

test_a_minor_jump_is_held_when_configured if {
	d := _one(_upgrade("0.9.4", "0.10.0"), {"holdMinor": true})
	d.code == "MinorVersionUpgrade"
	d.message == "the upgrade of etcd from 0.9.4 to 0.10.0 crosses a minor version; it waits for an admin (override MinorVersionUpgrade on the UpgradeGate) or holdMinor: false"
	d.facts == [
		"the upgrade of etcd goes from 0.9.4 (etcdoperator.v0.9.4) to 0.10.0 (etcdoperator.v0.10.0): minor version 0.9 to 0.10",
		"holdMinor is true for package etcd (holdMinor in data.tollgate.config.packs.version)",
		_name_fact("etcdoperator.v0.9.4", "0.9.4"),
		_name_fact("etcdoperator.v0.10.0", "0.10.0"),
	]
	d.lift == [{
		"text": "an admin sets holdMinor: false for package etcd (packages.etcd.holdMinor in data.tollgate.config.packs.version; the ConfigMaps labelled tollgate.dev/policy=data hold it), which releases all its minor upgrades:",
		"command": _config_command,
	}]
}

test_a_major_jump_is_not_also_a_minor_jump if {
	_codes(version.deny) == {"MajorVersionUpgrade"} with input as _upgrade("0.9.4", "1.0.0")
		with data.tollgate.config.packs.version as {"holdMinor": true}
}

test_major_jumps_pass_when_released_globally if _allows(_upgrade("0.9.4", "1.0.0"), {"holdMajor": false})

test_a_package_setting_wins_over_the_global_one if {
	_allows(_upgrade("0.9.4", "1.0.0"), {"holdMajor": true, "packages": {"etcd": {"holdMajor": false}}})
	_denies(_upgrade("0.9.4", "1.0.0"), {"holdMajor": false, "packages": {"etcd": {"holdMajor": true}}}, "MajorVersionUpgrade")
	_allows(_upgrade("0.9.4", "1.0.0"), {"packages": {"other": {"holdMajor": true}}, "holdMajor": false})
}

# --- which move: its ends, whatever the Subscription says ---------------------------------------

# A Subscription deleted and created again reports no installed CSV, while its plan replaces
# etcdoperator.v0.9.4: the move's from is that CSV, and the jump from it is held.
test_a_recreated_subscription_still_holds_the_major_jump_from_the_csv_it_replaces if {
	inp := object.union(_upgrade("0.9.4", "1.0.0"), {"subscription": {"status": {"installedCSV": ""}}})
	inp.subscription.status.installedCSV == ""
	d := _one(inp, {})
	d.code == "MajorVersionUpgrade"
	d.message == "the upgrade of etcd from 0.9.4 to 1.0.0 crosses a major version; it waits for an admin (override MajorVersionUpgrade on the UpgradeGate) or holdMajor: false"
}

# A new dependency (a Subscription the plan creates) whose CSV replaces an ownerless CSV of the
# namespace: a move from delta.v1.4.0 to delta.v2.0.0, judged as any upgrade.
_dependency_move(from_version, from_source) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {"metadata": {"name": "delta-stable", "namespace": "operators"}, "spec": {"name": "delta"}, "status": {"currentCSV": "delta.v2.0.0"}},
	"dependency": {"installPlan": "install-abc"},
	"now": "2024-06-05T12:00:00Z",
	"move": {
		"namespace": "operators",
		"installPlan": "install-abc",
		"from": {"name": "delta.v1.4.0", "package": "delta", "version": from_version, "versionFrom": from_source, "phase": "Succeeded", "operatorCondition": null, "owner": null},
		"to": {"name": "delta.v2.0.0", "package": "delta", "version": "2.0.0", "versionFrom": "InstallPlan install-abc status.bundleLookups[0].properties (property olm.package)", "channel": "stable", "catalog": {"namespace": "olm", "name": "operatorhubio"}},
	},
}

test_a_dependency_replacing_an_ownerless_csv_holds_the_major_jump if {
	d := _one(_dependency_move("1.4.0", "ClusterServiceVersion delta.v1.4.0 spec.version"), {})
	d.code == "MajorVersionUpgrade"
	d.facts == [
		"the upgrade of delta goes from 1.4.0 (delta.v1.4.0) to 2.0.0 (delta.v2.0.0): major version 1 to 2",
		"holdMajor is true for package delta (the default)",
		"the version of delta.v1.4.0 (1.4.0) is read from ClusterServiceVersion delta.v1.4.0 spec.version",
		"the version of delta.v2.0.0 (2.0.0) is read from InstallPlan install-abc status.bundleLookups[0].properties (property olm.package)",
	]
}

# The replaced CSV's version only in its name: Go reads it there and says so; holdMinor holds.
test_a_replaced_version_read_from_the_name_still_holds_a_minor_jump if {
	inp := json.patch(_dependency_move("1.4.0", _name_source("delta.v1.4.0")), [{"op": "replace", "path": "/move/to/version", "value": "1.5.0"}])
	d := _one(inp, {"holdMinor": true})
	d.code == "MinorVersionUpgrade"
	_name_fact("delta.v1.4.0", "1.4.0") in d.facts
}

test_an_unknown_replaced_version_of_a_dependency_is_held if {
	d := _one(_dependency_move(null, "nowhere: delta.v1.4.0 has no spec.version, no olm.package property in the plan, no PackageManifest entry and no semantic version at the end of its name"), {})
	d.code == "VersionUnknown"
	d.message == "cannot tell the version of the installed CSV delta.v1.4.0 (nowhere: delta.v1.4.0 has no spec.version, no olm.package property in the plan, no PackageManifest entry and no semantic version at the end of its name), so the version policy cannot clear it"
}

# A CSV step of the plan other than the Subscription's current CSV: the move names what is judged.
test_the_move_not_the_current_csv_is_judged if {
	inp := object.union(_upgrade("0.9.4", "0.9.5"), {"subscription": {"status": {"currentCSV": "etcdoperator.v2.0.0"}}})
	_allows(inp, {})
	_denies(inp, {"denied": ["0.9.5"]}, "VersionNotAllowed")
}

# A move across packages (a CSV replacing one of another package) is judged by the settings of
# the package it installs.
test_the_settings_of_the_package_moved_to_apply if {
	inp := json.patch(_upgrade("0.9.4", "1.0.0"), [{"op": "replace", "path": "/move/from/package", "value": "etcd-legacy"}])
	_allows(inp, {"packages": {"etcd": {"holdMajor": false}}})
	_denies(inp, {"packages": {"etcd-legacy": {"holdMajor": false}}}, "MajorVersionUpgrade")
}

# --- where versions come from --------------------------------------------------------------------

# Go reads the versions (the CSV's spec.version, the plan, the PackageManifest, the name as the
# last resort); the pack reads them from the move only, and the facts say where Go found them.
test_the_moves_version_wins_over_the_name if {
	inp := _input(_etcd("0.9.4"), _bundle_end("etcdoperator.v0.9.5", "1.0.0", "ClusterServiceVersion etcdoperator.v0.9.5 spec.version"))
	_denies(inp, {}, "MajorVersionUpgrade")
}

test_the_installed_version_is_the_moves if {
	inp := _input(_bundle_end("etcd-stable", "0.9.4", "ClusterServiceVersion etcd-stable spec.version"), _etcd("1.0.0"))
	_codes(version.deny) == {"MajorVersionUpgrade"} with input as inp
}

test_csv_objects_in_the_document_are_not_read if {
	inp := object.union(_upgrade("0.9.4", "0.9.5"), {
		"currentCSV": {"metadata": {"name": "etcdoperator.v0.9.5", "namespace": "operators"}, "spec": {"version": "1.0.0"}},
		"versions": {"etcdoperator.v0.9.5": {"version": "1.0.0", "from": "ClusterServiceVersion etcdoperator.v0.9.5 spec.version"}},
	})
	_allows(inp, {})
}

test_the_package_manifest_gives_the_version if {
	inp := _input(_etcd("0.9.4"), _bundle_end("etcd-latest", "1.2.0", "PackageManifest etcd channel alpha currentCSVDesc.version"))
	_said(version.deny) == {["MajorVersionUpgrade", "the upgrade of etcd from 0.9.4 to 1.2.0 crosses a major version; it waits for an admin (override MajorVersionUpgrade on the UpgradeGate) or holdMajor: false"]} with input as inp
	"the version of etcd-latest (1.2.0) is read from PackageManifest etcd channel alpha currentCSVDesc.version" in _one(inp, {}).facts
}

test_prereleases_build_metadata_and_a_leading_v_compare_as_semver_says if {
	_denies(_input(_named("prometheusoperator.0.47.0", "0.47.0"), _named("prometheusoperator.1.0.0-rc.1+build.5", "1.0.0-rc.1+build.5")), {}, "MajorVersionUpgrade")
	_denies(_input(_named("strimzi-cluster-operator-v0.38.0", "v0.38.0"), _named("strimzi-cluster-operator-v1.0.0", "v1.0.0")), {}, "MajorVersionUpgrade")
}

_no_version := "nowhere: etcd-latest has no spec.version, no olm.package property in the plan, no PackageManifest entry and no semantic version at the end of its name"

test_an_unknown_target_version_is_held if {
	d := _one(_input(_etcd("0.9.4"), _bundle_end("etcd-latest", null, _no_version)), {})
	d.code == "VersionUnknown"
	d.message == sprintf("cannot tell the version of the target CSV etcd-latest (%s), so the version policy cannot clear it", [_no_version])
	d.facts == [sprintf("no version is known for the target CSV etcd-latest: %s", [_no_version])]
	d.lift == [{"text": "the source catalog's PackageManifest lists etcd-latest with currentCSVDesc.version"}]
}

test_a_version_that_is_no_semantic_version_is_unknown if {
	d := _one(_input(_etcd("0.9.4"), _bundle_end("etcd-latest", "1.0", "ClusterServiceVersion etcd-latest spec.version")), {})
	d.message == "cannot tell the version of the target CSV etcd-latest (its version 1.0, read from ClusterServiceVersion etcd-latest spec.version, is not a semantic version), so the version policy cannot clear it"
}

test_an_unknown_installed_version_is_lifted_by_releasing_the_holds if {
	d := _one(_input(_bundle_end("etcd-old", null, _no_version), _etcd("1.0.0")), {})
	d.facts == [sprintf("no version is known for the installed CSV etcd-old: %s", [_no_version])]
	d.lift == [{
		"text": "an admin sets holdMajor: false and holdMinor: false for package etcd (data.tollgate.config.packs.version; the ConfigMaps labelled tollgate.dev/policy=data hold it), so that the installed version does not matter:",
		"command": _config_command,
	}]
}

test_an_unknown_installed_version_is_held_while_jumps_are_held if {
	inp := _input(_bundle_end("etcd-old", null, _no_version), _etcd("1.0.0"))
	_codes(version.deny) == {"VersionUnknown"} with input as inp
	_codes(version.deny) == {"VersionUnknown"} with input as inp
		with data.tollgate.config.packs.version as {"holdMajor": false, "holdMinor": true}
}

test_an_unknown_installed_version_does_not_matter_when_no_jump_is_held if {
	_allows(_input(_bundle_end("etcd-old", null, _no_version), _etcd("1.0.0")), {"holdMajor": false})
}

# --- allowed and denied ranges -------------------------------------------------------------------

test_a_version_outside_the_allowed_ranges_is_not_allowed if {
	version.deny == {{
		"code": "VersionNotAllowed",
		"title": "The version the Subscription would move to is not allowed",
		"message": `etcdoperator.v0.9.5 0.9.5 is not allowed for package etcd: it satisfies none of the allowed ranges "~0.8.0", ">=1.0.0 <2.0.0"`,
		"facts": [
			`etcdoperator.v0.9.5 brings version 0.9.5 of package etcd, and satisfies none of the allowed ranges "~0.8.0", ">=1.0.0 <2.0.0"`,
			_name_fact("etcdoperator.v0.9.4", "0.9.4"),
			_name_fact("etcdoperator.v0.9.5", "0.9.5"),
		],
		"lift": [{
			"text": "an admin adds a range that 0.9.5 satisfies to allowed in data.tollgate.config.packs.version (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
			"command": _config_command,
		}],
	}} with input as _upgrade("0.9.4", "0.9.5")
		with data.tollgate.config.packs.version as {"allowed": ["~0.8.0", ">=1.0.0 <2.0.0"]}
}

test_a_package_allowed_list_is_named_where_it_is_set if {
	d := _one(_upgrade("0.9.4", "0.9.5"), {"packages": {"etcd": {"allowed": ["^1.0.0"]}}})
	startswith(d.lift[0].text, "an admin adds a range that 0.9.5 satisfies to packages.etcd.allowed in")
}

test_a_version_inside_an_allowed_range_is_allowed if {
	_allows(_upgrade("0.9.4", "0.9.5"), {"allowed": [">=1.0.0", "^0.9.0"]})
}

test_a_denied_version_is_not_allowed if {
	d := _one(_upgrade("0.9.4", "0.9.5"), {"denied": ["0.9.5"]})
	d.code == "VersionNotAllowed"
	d.message == `etcdoperator.v0.9.5 0.9.5 is not allowed for package etcd: it matches the denied range "0.9.5"`
	d.facts == [
		`etcdoperator.v0.9.5 brings version 0.9.5 of package etcd, and matches the denied range "0.9.5"`,
		_name_fact("etcdoperator.v0.9.4", "0.9.4"),
		_name_fact("etcdoperator.v0.9.5", "0.9.5"),
	]
	d.lift == [{
		"text": `an admin removes the denied range "0.9.5" from denied in data.tollgate.config.packs.version (the ConfigMaps labelled tollgate.dev/policy=data hold it):`,
		"command": _config_command,
	}]
}

test_a_denied_range_set_twice_is_named_in_both_places if {
	d := _one(_upgrade("0.9.4", "0.9.5"), {"denied": ["0.9.5"], "packages": {"etcd": {"denied": ["0.9.5"]}}})
	startswith(d.lift[0].text, `an admin removes the denied range "0.9.5" from denied and packages.etcd.denied in`)
}

test_package_ranges_replace_allowed_and_add_to_denied if {
	cfg := {"allowed": ["<0.9.0"], "denied": ["0.9.6"], "packages": {"etcd": {"allowed": ["^0.9.0"], "denied": ["=0.9.5"]}}}
	_allows(_upgrade("0.9.4", "0.9.7"), cfg)
	_denies(_upgrade("0.9.4", "0.9.6"), cfg, "VersionNotAllowed")
	_denies(_upgrade("0.9.4", "0.9.5"), cfg, "VersionNotAllowed")
}

test_an_empty_package_allowed_list_lifts_the_global_one if {
	_allows(_upgrade("0.9.4", "0.9.5"), {"allowed": ["<0.9.0"], "packages": {"etcd": {"allowed": []}}})
}

test_alternatives_are_joined_by_double_bars if {
	cfg := {"allowed": ["<0.5.0 || >=0.9.5 <=0.9.6 || >0.10.0"]}
	_allows(_upgrade("0.9.4", "0.9.5"), cfg)
	_allows(_upgrade("0.9.4", "0.9.6"), cfg)
	_denies(_upgrade("0.9.4", "0.9.7"), cfg, "VersionNotAllowed")
	_denies(_upgrade("0.9.4", "0.10.0"), cfg, "VersionNotAllowed")
	_allows(_upgrade("0.9.4", "0.11.0"), cfg)
	_allows(_upgrade("0.3.0", "0.4.0"), cfg)
}

test_caret_ranges_follow_npm if {
	_allows(_upgrade("1.2.0", "1.9.0"), {"allowed": ["^1.2.3"], "holdMajor": false})
	_denies(_upgrade("1.2.0", "2.0.0"), {"allowed": ["^1.2.3"], "holdMajor": false}, "VersionNotAllowed")
	_allows(_upgrade("0.2.3", "0.2.9"), {"allowed": ["^0.2.3"]})
	_denies(_upgrade("0.2.3", "0.3.0"), {"allowed": ["^0.2.3"]}, "VersionNotAllowed")
	_allows(_upgrade("0.0.2", "0.0.3"), {"allowed": ["^v0.0.3"]})
	_denies(_upgrade("0.0.3", "0.0.4"), {"allowed": ["^0.0.3"]}, "VersionNotAllowed")
}

test_tilde_ranges_stay_within_a_minor if {
	_allows(_upgrade("1.2.0", "1.2.9"), {"allowed": ["~1.2.3"]})
	_denies(_upgrade("1.2.0", "1.3.0"), {"allowed": ["~1.2.3"]}, "VersionNotAllowed")
	_denies(_upgrade("1.2.0", "1.2.2"), {"allowed": ["~1.2.3"]}, "VersionNotAllowed")
}

test_first_installs_are_checked_against_ranges_but_not_jumps if {
	_allows(_input(null, _etcd("1.0.0")), {})
	_denies(_input(null, _etcd("1.0.0")), {"denied": [">=1.0.0"]}, "VersionNotAllowed")
	_codes(version.deny) == {"VersionNotAllowed"} with input as _input(null, _etcd("1.0.0"))
		with data.tollgate.config.packs.version as {"denied": [">=1.0.0"], "holdMinor": true}
}

test_nothing_moving_is_not_checked if {
	inp := object.union(_upgrade("0.9.4", "0.9.4"), {"pendingInstallPlans": [], "move": null})
	_allows(inp, {"allowed": [">=1.0.0"]})
	_allows(object.remove(inp, ["move"]), {"allowed": [">=1.0.0"]})
}

# A move whose CSV has the installed CSV's name (a pending plan that brings it again) is checked.
test_a_move_to_the_installed_csv_is_checked if {
	_denies(_upgrade("0.9.4", "0.9.4"), {"denied": ["0.9.4"]}, "VersionNotAllowed")
}

# --- configuration errors fail closed ------------------------------------------------------------

_config_error(cfg, fragment) if {
	some d in version.deny with input as _upgrade("0.9.4", "1.0.0") with data.tollgate.config.packs.version as cfg
	d.code == "VersionConfigInvalid"
	contains(d.message, fragment)
	_codes(version.deny) == {"VersionConfigInvalid"} with input as _upgrade("0.9.4", "1.0.0") with data.tollgate.config.packs.version as cfg
}

test_a_config_error_is_the_fact_and_fixing_it_the_remedy if {
	d := _one(_upgrade("0.9.4", "1.0.0"), {"holdMajor": "yes"})
	d.facts == ["data.tollgate.config.packs.version: holdMajor is not a boolean"]
	d.lift == [{
		"text": "an admin fixes data.tollgate.config.packs.version as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
		"command": _config_command,
	}]
}

test_config_not_an_object if _config_error("strict", "the configuration is not an object")

test_packages_not_an_object if _config_error({"packages": ["etcd"]}, "packages is not an object")

test_package_settings_not_an_object if _config_error({"packages": {"etcd": true}}, "packages.etcd is not an object")

test_hold_major_not_a_boolean if _config_error({"holdMajor": "yes"}, "holdMajor is not a boolean")

test_package_hold_minor_not_a_boolean if _config_error({"packages": {"etcd": {"holdMinor": 1}}}, "packages.etcd.holdMinor is not a boolean")

test_allowed_not_a_list if _config_error({"allowed": ">=1.0.0"}, "allowed is not a list of version ranges")

test_bad_range if _config_error({"denied": ["1.x"]}, "denied[0] 1.x is not a version range")

test_empty_alternative if _config_error({"packages": {"etcd": {"allowed": [">=1.0.0 ||"]}}}, "packages.etcd.allowed[0] >=1.0.0 || is not a version range")

test_range_not_a_string if _config_error({"allowed": [1]}, "allowed[0] 1 is not a version range")

test_a_config_error_is_reported_when_nothing_moves if {
	_codes(version.deny) == {"VersionConfigInvalid"} with input as {"apiVersion": "tollgate.dev/input/v1", "move": null}
		with data.tollgate.config.packs.version as {"holdMajor": "yes"}
}

# A move that lacks what Go always writes (an end, a name, a version) is read with defaults: the
# version is unknown, and no built-in error is raised.
test_a_move_missing_its_fields_is_an_unknown_version_without_a_built_in_error if {
	d := _one({"apiVersion": "tollgate.dev/input/v1", "move": {"namespace": "operators", "to": {"name": "etcdoperator.v1.2.3"}}}, {})
	d.message == "cannot tell the version of the target CSV etcdoperator.v1.2.3 (nowhere: the move does not say), so the version policy cannot clear it"
	_codes(version.deny) == {"VersionUnknown"} with input as {"move": {"from": {"name": "a"}, "to": null}}
	_allows({"apiVersion": "tollgate.dev/input/v1", "move": "upgrade"}, {})
}

test_package_settings_that_are_not_an_object_are_only_a_config_error if {
	_codes(version.deny) == {"VersionConfigInvalid"} with input as _upgrade("0.9.4", "1.0.0") with data.tollgate.config.packs.version as {"packages": {"etcd": true}}
}

# --- versions from the bundle ------------------------------------------------------------------

# A bundle version wins over the name: etcd.v1.9.9 whose bundle is 2.0.0 crosses a major.
test_the_bundle_version_wins_over_the_name if {
	inp := _input(
		_bundle_end("etcd.v1.0.0", "1.0.0", "ClusterServiceVersion etcd.v1.0.0 spec.version"),
		_bundle_end("etcd.v1.9.9", "2.0.0", "InstallPlan install-a status.bundleLookups[0].properties (property olm.package)"),
	)
	d := _one(inp, {})
	d.code == "MajorVersionUpgrade"
	"the version of etcd.v1.9.9 (2.0.0) is read from InstallPlan install-a status.bundleLookups[0].properties (property olm.package)" in d.facts
}

# Build metadata does not make a version another: 1.2.3+hotfix.1 is the denied 1.2.3.
test_build_metadata_compares_as_semver_says if {
	inp := _input(_etcd("1.2.0"), _bundle_end("etcd.v1.2.3-hotfix.1", "1.2.3+hotfix.1", "PackageManifest etcd channel stable currentCSVDesc.version"))
	_denies(inp, {"denied": ["1.2.3"]}, "VersionNotAllowed")
}

# A version Go read from the name, as its last resort, says so in the facts.
test_a_version_read_from_the_name_says_so if {
	d := _one(_upgrade("0.9.4", "1.0.0"), {})
	d.code == "MajorVersionUpgrade"
	_name_fact("etcdoperator.v1.0.0", "1.0.0") in d.facts
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
		"name": candidate.name, "package": "tollgate-demo", "version": candidate.version,
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

_bundle(v) := {"name": sprintf("tollgate-demo.v%s", [v]), "package": "tollgate-demo", "version": v, "catalog": "demo-catalog", "channels": ["stable"], "deprecations": []}

test_an_extension_minor_upgrade_passes_by_default if {
	count(version.deny) == 0 with input as _extension({"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}, _bundle("1.1.0"))
}

test_an_extension_without_a_candidate_is_not_judged if {
	count(version.deny) == 0 with input as _extension({"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}, null)
}

test_an_extension_major_upgrade_is_held if {
	some d in version.deny with input as _extension({"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}, _bundle("2.0.0"))
	d.code == "MajorVersionUpgrade"
	d.message == "the upgrade of tollgate-demo from 1.0.0 to 2.0.0 crosses a major version; it waits for an admin (override MajorVersionUpgrade on the ExtensionGate) or holdMajor: false"
	d.facts == [
		"the upgrade of tollgate-demo goes from 1.0.0 (tollgate-demo.v1.0.0) to 2.0.0 (tollgate-demo.v2.0.0): major version 1 to 2",
		"holdMajor is true for package tollgate-demo (the default)",
		"the version of tollgate-demo.v1.0.0 (1.0.0) is read from status.install.bundle of ClusterExtension tollgate-demo",
		"the version of tollgate-demo.v2.0.0 (2.0.0) is read from ClusterCatalog demo-catalog (the bundle's olm.package property)",
	]
}

test_an_extension_minor_hold_and_ranges_apply if {
	cfg := {"holdMinor": true, "packages": {"tollgate-demo": {"denied": ["1.1.0"]}}}
	codes := {d.code | some d in version.deny} with input as _extension({"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}, _bundle("1.1.0"))
		with data.tollgate.config.packs.version as cfg
	codes == {"MinorVersionUpgrade", "VersionNotAllowed"}
	some d in version.deny with input as _extension({"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}, _bundle("1.1.0"))
		with data.tollgate.config.packs.version as cfg
	d.code == "MinorVersionUpgrade"
	contains(d.message, "(override MinorVersionUpgrade on the ExtensionGate)")
}

test_an_extension_version_that_is_no_semver_is_unknown if {
	ds := version.deny with input as _extension({"name": "tollgate-demo.v1.0.0", "version": "1.0.0"}, object.union(_bundle("1.1.0"), {"version": "latest"}))
	[d.message | some d in ds] == ["cannot tell the version of the target bundle tollgate-demo.v1.1.0 (its version latest, read from ClusterCatalog demo-catalog (the bundle's olm.package property), is not a semantic version), so the version policy cannot clear it"]
	[d.lift | some d in ds] == [[{"text": "the catalog gives bundle tollgate-demo.v1.1.0 a semantic version (its olm.package property)"}]]
	ds2 := version.deny with input as _extension({"name": "tollgate-demo.v1.0.0", "version": null}, _bundle("1.1.0"))
	[d.facts | some d in ds2] == [["no version is known for the installed bundle tollgate-demo.v1.0.0: status.install.bundle of ClusterExtension tollgate-demo"]]
}

# An extension's first install (no installed bundle) is checked against ranges, never jumps:
# the same rule as a Subscription's.
test_an_extension_first_install_is_checked_against_ranges if {
	_allows(_extension(null, _bundle("2.0.0")), {})
	_denies(_extension(null, _bundle("2.0.0")), {"denied": ["2.0.0"]}, "VersionNotAllowed")
}
