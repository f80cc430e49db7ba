package tollgate.packs.version.test

import data.tollgate.packs.version

# --- input builders ------------------------------------------------------------------------------

_plan := {"metadata": {"name": "install-abc", "namespace": "operators"}, "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": ["etcdoperator.v1.0.0"]}, "status": {"phase": "RequiresApproval"}}

_csv(name, v) := {"metadata": {"name": name, "namespace": "operators"}, "spec": {"version": v}}

# An upgrade from installed to current; the current CSV object does not exist yet, as in a
# cluster where the InstallPlan waits for approval.
_input(installed, current) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {
		"metadata": {"name": "etcd", "namespace": "operators"},
		"spec": {"name": "etcd", "channel": "alpha", "source": "operatorhubio", "sourceNamespace": "olm"},
		"status": {"installedCSV": installed, "currentCSV": current},
	},
	"installedCSV": _installed_csv(installed),
	"currentCSV": null,
	"pendingInstallPlans": [_plan],
	"packageManifest": null,
	"now": "2024-06-05T12:00:00Z",
}

_installed_csv("") := null

_installed_csv(name) := {"metadata": {"name": name, "namespace": "operators"}, "spec": {}} if name != ""

_name_fact(name, v) := sprintf("the version of %s (%s) is read from its name: no bundle version is known for it (no spec.version, no olm.package property in a pending plan, no PackageManifest entry)", [name, v])

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
	}} with input as _input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0")
}

test_the_hold_fact_names_where_the_hold_is_set if {
	_one(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"holdMajor": true}).facts[1] == "holdMajor is true for package etcd (holdMajor in data.tollgate.config.packs.version)"
	_one(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"holdMajor": false, "packages": {"etcd": {"holdMajor": true}}}).facts[1] == "holdMajor is true for package etcd (packages.etcd.holdMajor in data.tollgate.config.packs.version)"
}

test_a_minor_jump_passes_by_default if {
	count(version.deny) == 0 with input as _input("etcdoperator.v0.9.4", "etcdoperator.v0.10.0")
}

test_a_patch_passes_when_minor_jumps_are_held if _allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"holdMinor": true})

test_a_minor_jump_is_held_when_configured if {
	d := _one(_input("etcdoperator.v0.9.4", "etcdoperator.v0.10.0"), {"holdMinor": true})
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
	_codes(version.deny) == {"MajorVersionUpgrade"} with input as _input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0")
		with data.tollgate.config.packs.version as {"holdMinor": true}
}

test_major_jumps_pass_when_released_globally if _allows(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"holdMajor": false})

test_a_package_setting_wins_over_the_global_one if {
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"holdMajor": true, "packages": {"etcd": {"holdMajor": false}}})
	_denies(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"holdMajor": false, "packages": {"etcd": {"holdMajor": true}}}, "MajorVersionUpgrade")
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"packages": {"other": {"holdMajor": true}}, "holdMajor": false})
}

# --- where versions come from --------------------------------------------------------------------

test_spec_version_wins_over_the_name if {
	inp := object.union(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"currentCSV": _csv("etcdoperator.v0.9.5", "1.0.0")})
	_denies(inp, {}, "MajorVersionUpgrade")
}

test_installed_spec_version_is_used if {
	inp := object.union(_input("etcd-stable", "etcdoperator.v1.0.0"), {"installedCSV": _csv("etcd-stable", "v0.9.4")})
	_codes(version.deny) == {"MajorVersionUpgrade"} with input as inp
}

test_a_csv_object_of_another_name_is_ignored if {
	inp := object.union(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"currentCSV": _csv("something-else", "1.0.0")})
	_allows(inp, {})
}

test_the_package_manifest_gives_the_version if {
	inp := object.union(_input("etcdoperator.v0.9.4", "etcd-latest"), {"packageManifest": {"status": {"channels": [
		{"name": "beta", "currentCSV": "other", "currentCSVDesc": {"version": "5.0.0"}},
		{"name": "alpha", "currentCSV": "etcd-latest", "currentCSVDesc": {"version": "1.2.0"}},
	]}}})
	_said(version.deny) == {["MajorVersionUpgrade", "the upgrade of etcd from 0.9.4 to 1.2.0 crosses a major version; it waits for an admin (override MajorVersionUpgrade on the UpgradeGate) or holdMajor: false"]} with input as inp
}

test_name_suffixes_without_v_and_with_prerelease_parse if {
	_denies(_input("prometheusoperator.0.47.0", "prometheusoperator.1.0.0-rc.1+build.5"), {}, "MajorVersionUpgrade")
	_denies(_input("strimzi-cluster-operator-v0.38.0", "strimzi-cluster-operator-v1.0.0"), {}, "MajorVersionUpgrade")
}

test_an_unknown_target_version_is_held if {
	d := _one(_input("etcdoperator.v0.9.4", "etcd-latest"), {})
	d.code == "VersionUnknown"
	d.message == "cannot tell the version of the target CSV etcd-latest (no spec.version, no PackageManifest entry, no semantic version at the end of its name), so the version policy cannot clear it"
	d.facts == ["no version is known for the target CSV etcd-latest: it has no spec.version, no PackageManifest channel entry with a version, and no semantic version at the end of its name"]
	d.lift == [{"text": "the source catalog's PackageManifest lists etcd-latest with currentCSVDesc.version"}]
}

test_an_unknown_installed_version_is_lifted_by_releasing_the_holds if {
	d := _one(_input("etcd-old", "etcdoperator.v1.0.0"), {})
	d.facts == ["no version is known for the installed CSV etcd-old: it has no spec.version, no PackageManifest channel entry with a version, and no semantic version at the end of its name"]
	d.lift == [{
		"text": "an admin sets holdMajor: false and holdMinor: false for package etcd (data.tollgate.config.packs.version; the ConfigMaps labelled tollgate.dev/policy=data hold it), so that the installed version does not matter:",
		"command": _config_command,
	}]
}

test_an_unknown_installed_version_is_held_while_jumps_are_held if {
	_codes(version.deny) == {"VersionUnknown"} with input as _input("etcd-old", "etcdoperator.v1.0.0")
	_codes(version.deny) == {"VersionUnknown"} with input as _input("etcd-old", "etcdoperator.v1.0.0")
		with data.tollgate.config.packs.version as {"holdMajor": false, "holdMinor": true}
}

test_an_unknown_installed_version_does_not_matter_when_no_jump_is_held if {
	_allows(_input("etcd-old", "etcdoperator.v1.0.0"), {"holdMajor": false})
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
	}} with input as _input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5")
		with data.tollgate.config.packs.version as {"allowed": ["~0.8.0", ">=1.0.0 <2.0.0"]}
}

test_a_package_allowed_list_is_named_where_it_is_set if {
	d := _one(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"packages": {"etcd": {"allowed": ["^1.0.0"]}}})
	startswith(d.lift[0].text, "an admin adds a range that 0.9.5 satisfies to packages.etcd.allowed in")
}

test_a_version_inside_an_allowed_range_is_allowed if {
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"allowed": [">=1.0.0", "^0.9.0"]})
}

test_a_denied_version_is_not_allowed if {
	d := _one(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"denied": ["0.9.5"]})
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
	d := _one(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"denied": ["0.9.5"], "packages": {"etcd": {"denied": ["0.9.5"]}}})
	startswith(d.lift[0].text, `an admin removes the denied range "0.9.5" from denied and packages.etcd.denied in`)
}

test_package_ranges_replace_allowed_and_add_to_denied if {
	cfg := {"allowed": ["<0.9.0"], "denied": ["0.9.6"], "packages": {"etcd": {"allowed": ["^0.9.0"], "denied": ["=0.9.5"]}}}
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.7"), cfg)
	_denies(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.6"), cfg, "VersionNotAllowed")
	_denies(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), cfg, "VersionNotAllowed")
}

test_an_empty_package_allowed_list_lifts_the_global_one if {
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), {"allowed": ["<0.9.0"], "packages": {"etcd": {"allowed": []}}})
}

test_alternatives_are_joined_by_double_bars if {
	cfg := {"allowed": ["<0.5.0 || >=0.9.5 <=0.9.6 || >0.10.0"]}
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.5"), cfg)
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.6"), cfg)
	_denies(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.7"), cfg, "VersionNotAllowed")
	_denies(_input("etcdoperator.v0.9.4", "etcdoperator.v0.10.0"), cfg, "VersionNotAllowed")
	_allows(_input("etcdoperator.v0.9.4", "etcdoperator.v0.11.0"), cfg)
	_allows(_input("etcdoperator.v0.3.0", "etcdoperator.v0.4.0"), cfg)
}

test_caret_ranges_follow_npm if {
	_allows(_input("x.v1.2.0", "x.v1.9.0"), {"allowed": ["^1.2.3"], "holdMajor": false})
	_denies(_input("x.v1.2.0", "x.v2.0.0"), {"allowed": ["^1.2.3"], "holdMajor": false}, "VersionNotAllowed")
	_allows(_input("x.v0.2.3", "x.v0.2.9"), {"allowed": ["^0.2.3"]})
	_denies(_input("x.v0.2.3", "x.v0.3.0"), {"allowed": ["^0.2.3"]}, "VersionNotAllowed")
	_allows(_input("x.v0.0.2", "x.v0.0.3"), {"allowed": ["^v0.0.3"]})
	_denies(_input("x.v0.0.3", "x.v0.0.4"), {"allowed": ["^0.0.3"]}, "VersionNotAllowed")
}

test_tilde_ranges_stay_within_a_minor if {
	_allows(_input("x.v1.2.0", "x.v1.2.9"), {"allowed": ["~1.2.3"]})
	_denies(_input("x.v1.2.0", "x.v1.3.0"), {"allowed": ["~1.2.3"]}, "VersionNotAllowed")
	_denies(_input("x.v1.2.0", "x.v1.2.2"), {"allowed": ["~1.2.3"]}, "VersionNotAllowed")
}

test_first_installs_are_checked_against_ranges_but_not_jumps if {
	_allows(_input("", "etcdoperator.v1.0.0"), {})
	_denies(_input("", "etcdoperator.v1.0.0"), {"denied": [">=1.0.0"]}, "VersionNotAllowed")
}

test_nothing_pending_is_not_checked if {
	inp := object.union(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.4"), {"pendingInstallPlans": []})
	_allows(inp, {"allowed": [">=1.0.0"]})
}

test_a_pending_plan_alone_is_checked if {
	inp := object.union(_input("etcdoperator.v0.9.4", "etcdoperator.v0.9.4"), {"currentCSV": _csv("etcdoperator.v0.9.4", "0.9.4")})
	_denies(inp, {"denied": ["0.9.4"]}, "VersionNotAllowed")
}

# --- configuration errors fail closed ------------------------------------------------------------

_config_error(cfg, fragment) if {
	some d in version.deny with input as _input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0") with data.tollgate.config.packs.version as cfg
	d.code == "VersionConfigInvalid"
	contains(d.message, fragment)
	_codes(version.deny) == {"VersionConfigInvalid"} with input as _input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0") with data.tollgate.config.packs.version as cfg
}

test_a_config_error_is_the_fact_and_fixing_it_the_remedy if {
	d := _one(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"holdMajor": "yes"})
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

# A CSV that does not exist yet is null in the input (the usual case for the new one): it must
# not reach object.get, which raises a built-in error on null; the version then comes from the
# PackageManifest or the name.
test_a_missing_csv_object_falls_back_to_the_name_without_a_built_in_error if {
	version._csv_version("etcdoperator.v1.2.3") == "1.2.3" with input as {"currentCSV": null, "installedCSV": null}
	version._csv_version("etcdoperator.v1.2.3") == "1.2.3" with input as {"currentCSV": "etcdoperator.v1.2.3", "installedCSV": null}
	not version._csv_version("etcd") with input as {"currentCSV": null, "installedCSV": null}
}

test_package_settings_that_are_not_an_object_are_only_a_config_error if {
	_codes(version.deny) == {"VersionConfigInvalid"} with input as _input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0") with data.tollgate.config.packs.version as {"packages": {"etcd": true}}
}

# --- versions from the bundle (input.versions) -----------------------------------------------

# A bundle version wins over the name: etcd.v1.9.9 whose bundle is 2.0.0 crosses a major.
test_the_bundle_version_wins_over_the_name if {
	inp := object.union(_input("etcd.v1.0.0", "etcd.v1.9.9"), {"versions": {
		"etcd.v1.0.0": {"version": "1.0.0", "from": "ClusterServiceVersion etcd.v1.0.0 spec.version"},
		"etcd.v1.9.9": {"version": "2.0.0", "from": "InstallPlan install-a status.bundleLookups[0].properties (property olm.package)"},
	}})
	d := _one(inp, {})
	d.code == "MajorVersionUpgrade"
	"the version of etcd.v1.9.9 (2.0.0) is its bundle's, from InstallPlan install-a status.bundleLookups[0].properties (property olm.package)" in d.facts
}

# Build metadata does not make a version another: 1.2.3+hotfix.1 is the denied 1.2.3.
test_build_metadata_compares_as_semver_says if {
	inp := object.union(_input("etcd.v1.2.0", "etcd.v1.2.3-hotfix.1"), {"versions": {"etcd.v1.2.3-hotfix.1": {"version": "1.2.3+hotfix.1", "from": "PackageManifest etcd channel stable currentCSVDesc.version"}}})
	_denies(inp, {"denied": ["1.2.3"]}, "VersionNotAllowed")
}

# With input.versions, a CSV it does not list has its version from the name, and says so.
test_with_versions_the_name_is_the_last_resort if {
	inp := object.union(_input("etcdoperator.v0.9.4", "etcdoperator.v1.0.0"), {"versions": {}})
	d := _one(inp, {})
	d.code == "MajorVersionUpgrade"
	_name_fact("etcdoperator.v1.0.0", "1.0.0") in d.facts
}

# --- extension documents -----------------------------------------------------------------------

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
}

_bundle(version) := {"name": sprintf("tollgate-demo.v%s", [version]), "package": "tollgate-demo", "version": version, "catalog": "demo-catalog", "channels": ["stable"], "deprecations": []}

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
		"the version of tollgate-demo.v1.0.0 (1.0.0) is its bundle's, from status.install.bundle of the ClusterExtension",
		"the version of tollgate-demo.v2.0.0 (2.0.0) is its bundle's, from the catalog",
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
	[d.message | some d in ds] == ["cannot tell the version of the target bundle tollgate-demo.v1.1.0 of ClusterExtension tollgate-demo (latest is not a semantic version), so the version policy cannot clear it"]
	[d.lift | some d in ds] == [[{"text": "the catalog gives bundle tollgate-demo.v1.1.0 a semantic version (its olm.package property)"}]]
	ds2 := version.deny with input as _extension({"name": "tollgate-demo.v1.0.0", "version": ""}, _bundle("1.1.0"))
	[d.facts | some d in ds2] == [["the installed bundle tollgate-demo.v1.0.0 of ClusterExtension tollgate-demo has version  (input.installed.version), which is not a semantic version"]]
}
