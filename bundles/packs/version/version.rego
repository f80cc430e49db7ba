# METADATA
# title: Version policy
# description: |
#   Decides by version number: the version an upgrade (or a first install) would bring must
#   satisfy the allowed ranges and none of the denied ones, and major version jumps (optionally
#   minor ones too) are held. Configured under data.tollgate.config.packs.version, globally and
#   per package (subscription.spec.name). Without configuration, major jumps are held and
#   nothing else is. Versions are the bundle's (input.versions), or, as a last resort that
#   the denials say, the CSV name's suffix (etcdoperator.v0.9.4).
package tollgate.packs.version

# METADATA
# title: The version the Subscription would move to is not allowed
# custom:
#   code: VersionNotAllowed
deny contains denial if {
	_applies
	target := _target_version
	some why in _not_allowed_reasons
	denial := _denial(
		rego.metadata.rule(),
		sprintf("%s %s is not allowed for package %s: %s", [_current_name, target, _package, why.reason]),
		array.concat([sprintf("%s brings version %s of package %s, and %s", [_current_name, target, _package, why.fact])], _version_facts),
		[why.remedy],
	)
}

# METADATA
# title: The upgrade crosses a major version
# custom:
#   code: MajorVersionUpgrade
deny contains denial if {
	_applies
	_setting("holdMajor", true) == true
	from := _installed_version
	to := _target_version
	_part(to, 0) > _part(from, 0)
	denial := _denial(
		rego.metadata.rule(),
		sprintf("the upgrade of %s from %s to %s crosses a major version; it waits for an admin (override MajorVersionUpgrade on the %s) or holdMajor: false", [_package, from, to, _gate_kind]),
		array.concat(
			[
				sprintf("the upgrade of %s goes from %s (%s) to %s (%s): major version %d to %d", [_package, from, _installed_name, to, _current_name, _part(from, 0), _part(to, 0)]),
				_hold_fact("holdMajor"),
			],
			_version_facts,
		),
		[_release_remedy("holdMajor", "major")],
	)
}

# METADATA
# title: The upgrade crosses a minor version
# custom:
#   code: MinorVersionUpgrade
deny contains denial if {
	_applies
	_setting("holdMinor", false) == true
	from := _installed_version
	to := _target_version
	_part(to, 0) == _part(from, 0)
	_part(to, 1) > _part(from, 1)
	denial := _denial(
		rego.metadata.rule(),
		sprintf("the upgrade of %s from %s to %s crosses a minor version; it waits for an admin (override MinorVersionUpgrade on the %s) or holdMinor: false", [_package, from, to, _gate_kind]),
		array.concat(
			[
				sprintf("the upgrade of %s goes from %s (%s) to %s (%s): minor version %d.%d to %d.%d", [_package, from, _installed_name, to, _current_name, _part(from, 0), _part(from, 1), _part(to, 0), _part(to, 1)]),
				_hold_fact("holdMinor"),
			],
			_version_facts,
		),
		[_release_remedy("holdMinor", "minor")],
	)
}

# _hold_fact names a hold setting that is on, and where it is set.
_hold_fact(key) := sprintf("%s is true for package %s (%s)", [key, _package, _setting_source(key)])

_setting_source(key) := sprintf("packages.%s.%s in data.tollgate.config.packs.version", [_package, key]) if {
	object.get(_package_config, key, null) != null
} else := sprintf("%s in data.tollgate.config.packs.version", [key]) if {
	object.get(_settings, key, null) != null
} else := "the default"

# _release_remedy turns a hold off for the package.
_release_remedy(key, jumps) := {
	"text": sprintf("an admin sets %s: false for package %s (packages.%s.%s in data.tollgate.config.packs.version; the ConfigMaps labelled tollgate.dev/policy=data hold it), which releases all its %s upgrades:", [key, _package, _package, key, jumps]),
	"command": _config_command,
}

# METADATA
# title: A version the policy needs cannot be determined
# custom:
#   code: VersionUnknown
deny contains denial if {
	_applies
	some which, name in _unknown_versions
	not _extension
	denial := _denial(
		rego.metadata.rule(),
		sprintf("cannot tell the version of the %s CSV %s (no spec.version, no PackageManifest entry, no semantic version at the end of its name), so the version policy cannot clear it", [which, name]),
		[sprintf("no version is known for the %s CSV %s: it has no spec.version, no PackageManifest channel entry with a version, and no semantic version at the end of its name", [which, name])],
		[_unknown_remedy[which]],
	)
}

# METADATA
# title: A version the policy needs cannot be determined
# custom:
#   code: VersionUnknown
deny contains denial if {
	_applies
	some which, name in _unknown_versions
	_extension
	given := object.get(input, [_extension_key[which], "version"], null)
	denial := _denial(
		rego.metadata.rule(),
		sprintf("cannot tell the version of the %s bundle %s of ClusterExtension %s (%v is not a semantic version), so the version policy cannot clear it", [which, name, _extension_name, given]),
		[sprintf("the %s bundle %s of ClusterExtension %s has version %v (input.%s.version), which is not a semantic version", [which, name, _extension_name, given, _extension_key[which]])],
		[_unknown_remedy[which]],
	)
}

_unknown_remedy["target"] := {"text": sprintf("the source catalog's PackageManifest lists %s with currentCSVDesc.version", [_current_name])} if not _extension

_unknown_remedy["target"] := {"text": sprintf("the catalog gives bundle %s a semantic version (its olm.package property)", [_current_name])} if _extension

_extension_key := {"target": "candidate", "installed": "installed"}

_unknown_remedy["installed"] := {
	"text": sprintf("an admin sets holdMajor: false and holdMinor: false for package %s (data.tollgate.config.packs.version; the ConfigMaps labelled tollgate.dev/policy=data hold it), so that the installed version does not matter:", [_package]),
	"command": _config_command,
}

# METADATA
# title: The version policy configuration cannot be understood
# custom:
#   code: VersionConfigInvalid
deny contains denial if {
	some msg in _config_errors
	denial := _denial(
		rego.metadata.rule(),
		sprintf("version policy (data.tollgate.config.packs.version): %s; upgrades are held until it is fixed", [msg]),
		[sprintf("data.tollgate.config.packs.version: %s", [msg])],
		[{"text": "an admin fixes data.tollgate.config.packs.version as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command}],
	)
}

# _denial is the shape tollgate.main collects (as lib.explained builds it in the embedded
# policies, which a pack does not import): the code and title from the rule's annotations, the
# message, the facts it rests on and the ways to lift it. tollgate.main appends the UpgradeGate
# override as the last way.
_denial(meta, message, facts, lift) := object.union(
	{"code": meta.custom.code, "message": message, "facts": facts, "lift": lift},
	{"title": t | t := meta.title},
)

# _config_command lists where admin data comes from.
_config_command := "kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml"

# --- configuration ---------------------------------------------------------------------------

default _config := {}

_config := data.tollgate.config.packs.version

# _settings is the configuration when it is an object, else {} (and a configuration error), and
# _package_config the package's settings when they are an object, so that no lookup raises a
# built-in error on them.
_settings := _config if is_object(_config)

else := {}

_package := object.get(input, ["extension", "spec", "source", "catalog", "packageName"], "") if {
	_extension
} else := object.get(input, ["subscription", "spec", "name"], "")

_package_config := c if {
	c := object.get(_settings, ["packages", _package], {})
	is_object(c)
} else := {}

# A per-package setting wins over the global one, which wins over the default.
_setting(key, default_value) := object.get(_package_config, key, object.get(_settings, key, default_value))

# The package's own allowed list replaces the global one; denied lists add up.
_allowed := object.get(_package_config, "allowed", object.get(_settings, "allowed", []))

_denied := array.concat(object.get(_settings, "denied", []), object.get(_package_config, "denied", []))

_config_errors contains "packages is not an object mapping package names to settings" if not is_object(object.get(_settings, "packages", {}))

_config_errors contains "the configuration is not an object" if not is_object(_config)

_config_errors contains msg if {
	some name, settings in object.get(_settings, "packages", {})
	not is_object(settings)
	msg := sprintf("packages.%s is not an object", [name])
}

_config_errors contains msg if {
	some where, settings in _scopes
	some key in ["holdMajor", "holdMinor"]
	not is_boolean(object.get(settings, key, false))
	msg := sprintf("%s is not a boolean", [_path(where, key)])
}

_config_errors contains msg if {
	some where, settings in _scopes
	some key in ["allowed", "denied"]
	not is_array(object.get(settings, key, []))
	msg := sprintf("%s is not a list of version ranges", [_path(where, key)])
}

_config_errors contains msg if {
	some where, settings in _scopes
	some key in ["allowed", "denied"]
	some i, constraint in object.get(settings, key, [])
	not _valid_constraint(constraint)
	msg := sprintf("%s[%d] %v is not a version range; write comparators such as \">=1.2.0 <2.0.0\", \"^1.2.0\", \"~1.2.0\" or \"1.2.3\", alternatives joined by ||", [_path(where, key), i, constraint])
}

# Every settings object that can hold keys, by its path in the configuration.
_scopes[""] := _config if is_object(_config)

_scopes[sprintf("packages.%s", [name])] := settings if {
	some name, settings in object.get(_settings, "packages", {})
	is_object(settings)
}

_path("", key) := key

_path(where, key) := sprintf("%s.%s", [where, key]) if where != ""

# --- which Subscriptions the pack looks at -------------------------------------------------------

# An extension document (tollgate.dev/extension/v1) is about a ClusterExtension: its installed
# bundle (input.installed) and a candidate successor (input.candidate, null when there is none),
# each with its name and version as the catalog gives them.
_extension if input.apiVersion == "tollgate.dev/extension/v1"

_extension_name := object.get(input, ["extension", "metadata", "name"], "")

_gate_kind := "ExtensionGate" if {
	_extension
} else := "UpgradeGate"

_installed_name := n if {
	not _extension
	n := object.get(input, ["subscription", "status", "installedCSV"], "")
	is_string(n)
	n != ""
}

_installed_name := n if {
	_extension
	n := object.get(input, ["installed", "name"], "")
	is_string(n)
	n != ""
}

_current_name := n if {
	not _extension
	n := object.get(input, ["subscription", "status", "currentCSV"], "")
	is_string(n)
	n != ""
}

_current_name := n if {
	_extension
	n := object.get(input, ["candidate", "name"], "")
	is_string(n)
	n != ""
}

_upgrade_pending if _current_name != object.get(input, ["subscription", "status", "installedCSV"], "")

_upgrade_pending if count(object.get(input, "pendingInstallPlans", [])) > 0

_upgrade_pending if {
	_extension
	is_object(object.get(input, "candidate", null))
}

_applies if {
	_upgrade_pending
	count(_config_errors) == 0
}

# --- versions --------------------------------------------------------------------------------

# The version of the CSV an upgrade moves to, and of the installed one: the bundle's, as
# input.versions gives it (the CSV's spec.version, the plan's olm.package property or CSV step,
# the PackageManifest), else, as a last resort that the denials say, the name's suffix. OLM
# never derives a version from a name: a bundle version always wins over it.
_target_version := _csv_version(_current_name) if not _extension

_installed_version := _csv_version(_installed_name) if not _extension

# An extension's versions are the catalog's (the olm.package property OLM v1 reads): never
# derived from a name.
_target_version := _semver(object.get(input, ["candidate", "version"], "")) if _extension

_installed_version := _semver(object.get(input, ["installed", "version"], "")) if _extension

_unknown_versions["target"] := _current_name if not _target_version

_unknown_versions["installed"] := _installed_name if {
	not _installed_version
	_uses_installed_version
}

_uses_installed_version if _setting("holdMajor", true) == true

_uses_installed_version if _setting("holdMinor", false) == true

_csv_version(name) := v if {
	v := _bundle_version(name)
} else := v if {
	v := _name_version(name)
}

# _bundle_version is the version input.versions gives name; a document of an older manager,
# without input.versions, gives it through the CSV object or the PackageManifest.
_bundle_version(name) := _semver(input.versions[name].version) if is_object(object.get(input, "versions", null))

_bundle_version(name) := v if {
	not is_object(object.get(input, "versions", null))
	some csv in [input.currentCSV, input.installedCSV]
	is_object(csv)
	object.get(csv, ["metadata", "name"], "") == name
	v := _semver(object.get(csv, ["spec", "version"], ""))
} else := v if {
	not is_object(object.get(input, "versions", null))
	some channel in object.get(input, ["packageManifest", "status", "channels"], [])
	channel.currentCSV == name
	v := _semver(object.get(channel, ["currentCSVDesc", "version"], ""))
}

_name_version(name) := v if {
	not _bundle_version(name)
	m := regex.find_all_string_submatch_n(`[.-]v?([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`, name, 1)
	v := _semver(m[0][1])
}

# _version_facts say where each version a denial rests on was read.
_version_facts := [fact |
	some name in [_installed_name, _current_name]
	fact := _version_fact(name)
] if {
	not _extension
} else := [fact |
	some [name, v, from] in [
		[_installed_name, _installed_version, "status.install.bundle of the ClusterExtension"],
		[_current_name, _target_version, "the catalog"],
	]
	fact := sprintf("the version of %s (%s) is its bundle's, from %s", [name, v, from])
]

_version_fact(name) := sprintf("the version of %s (%s) is its bundle's, from %s", [name, v, from]) if {
	v := _bundle_version(name)
	from := object.get(input, ["versions", name, "from"], "its CSV or the PackageManifest")
} else := sprintf("the version of %s (%s) is read from its name: no bundle version is known for it (no spec.version, no olm.package property in a pending plan, no PackageManifest entry)", [name, v]) if {
	v := _name_version(name)
}

_semver(s) := v if {
	is_string(s)
	v := trim_prefix(s, "v")
	semver.is_valid(v)
}

# _part returns the major (0), minor (1) or patch (2) number of a valid semantic version.
_part(v, i) := to_number(split(split(split(v, "+")[0], "-")[0], ".")[i])

# --- ranges ----------------------------------------------------------------------------------

# _not_allowed_reasons are {reason, fact, remedy}: why the target version is not allowed, for
# the message and as a fact, and the configuration change that lifts it.
_not_allowed_reasons contains {"reason": sprintf("it %s", [fact]), "fact": fact, "remedy": remedy} if {
	count(_allowed) > 0
	not _any_satisfied(_target_version, _allowed)
	fact := sprintf("satisfies none of the allowed ranges %v", [concat(", ", [sprintf("%q", [c]) | some c in _allowed])])
	remedy := {
		"text": sprintf("an admin adds a range that %s satisfies to %s in data.tollgate.config.packs.version (the ConfigMaps labelled tollgate.dev/policy=data hold it):", [_target_version, _allowed_key]),
		"command": _config_command,
	}
}

_not_allowed_reasons contains {"reason": sprintf("it %s", [fact]), "fact": fact, "remedy": remedy} if {
	some constraint in _denied
	_satisfies(_target_version, constraint)
	fact := sprintf("matches the denied range %q", [constraint])
	remedy := {
		"text": sprintf("an admin removes the denied range %q from %s in data.tollgate.config.packs.version (the ConfigMaps labelled tollgate.dev/policy=data hold it):", [constraint, _denied_keys(constraint)]),
		"command": _config_command,
	}
}

# _allowed_key is where the allowed ranges in force are set.
_allowed_key := sprintf("packages.%s.allowed", [_package]) if {
	object.get(_package_config, "allowed", null) != null
} else := "allowed"

# _denied_keys are where a denied range is set (globally, for the package, or both).
_denied_keys(constraint) := concat(" and ", [key |
	some key, ranges in {"denied": object.get(_settings, "denied", []), sprintf("packages.%s.denied", [_package]): object.get(_package_config, "denied", [])}
	constraint in ranges
])

_any_satisfied(v, constraints) if {
	some constraint in constraints
	_satisfies(v, constraint)
}

_alternatives(constraint) := [comparators |
	some alternative in split(constraint, "||")
	comparators := [c | some c in split(trim_space(alternative), " "); c != ""]
]

_valid_constraint(constraint) if {
	is_string(constraint)
	alternatives := _alternatives(constraint)
	every comparators in alternatives {
		count(comparators) > 0
		every c in comparators {
			_comparator(c)
		}
	}
}

_satisfies(v, constraint) if {
	some comparators in _alternatives(constraint)
	count(comparators) > 0
	every c in comparators {
		_holds(v, _comparator(c))
	}
}

_comparator(c) := [op, w] if {
	m := regex.find_all_string_submatch_n(`^(>=|<=|>|<|=|\^|~)?v?(.+)$`, c, 1)[0]
	semver.is_valid(m[2])
	op := _default_op(m[1])
	w := m[2]
}

_default_op("") := "="

_default_op(op) := op if op != ""

_holds(v, [">=", w]) if semver.compare(v, w) >= 0

_holds(v, ["<=", w]) if semver.compare(v, w) <= 0

_holds(v, [">", w]) if semver.compare(v, w) > 0

_holds(v, ["<", w]) if semver.compare(v, w) < 0

_holds(v, ["=", w]) if semver.compare(v, w) == 0

# ^1.2.3 is >=1.2.3 <2.0.0; ^0.2.3 is >=0.2.3 <0.3.0; ^0.0.3 is >=0.0.3 <0.0.4 (as npm does).
_holds(v, ["^", w]) if {
	semver.compare(v, w) >= 0
	semver.compare(v, _caret_ceiling(w)) < 0
}

# ~1.2.3 is >=1.2.3 <1.3.0.
_holds(v, ["~", w]) if {
	semver.compare(v, w) >= 0
	semver.compare(v, sprintf("%d.%d.0", [_part(w, 0), _part(w, 1) + 1])) < 0
}

_caret_ceiling(w) := sprintf("%d.0.0", [_part(w, 0) + 1]) if _part(w, 0) > 0

_caret_ceiling(w) := sprintf("0.%d.0", [_part(w, 1) + 1]) if {
	_part(w, 0) == 0
	_part(w, 1) > 0
}

_caret_ceiling(w) := sprintf("0.0.%d", [_part(w, 2) + 1]) if {
	_part(w, 0) == 0
	_part(w, 1) == 0
}
