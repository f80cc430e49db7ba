# METADATA
# title: Version policy
# description: |
#   Decides by version number: the version a move (an upgrade, or a first install) would bring
#   must satisfy the allowed ranges and none of the denied ones, and moves that cross a major
#   version (optionally a minor one too) are held. The pack judges input.move, the same shape
#   for OLM v0 and v1, and nothing when it is null. Configured under
#   data.tollgate.config.packs.version, globally and per package (move.to.package). Without
#   configuration, major jumps are held and nothing else is. Versions are the move's
#   (move.from.version, move.to.version), each with where it was read (versionFrom).
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
		sprintf("%s %s is not allowed for package %s: %s", [_to.name, target, _package, why.reason]),
		array.concat([sprintf("%s brings version %s of package %s, and %s", [_to.name, target, _package, why.fact])], _version_facts),
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
		sprintf("the upgrade of %s from %s to %s crosses a major version; it waits for an admin (override MajorVersionUpgrade on the %s) or holdMajor: false", [_package, from, to, _words.gate]),
		array.concat(
			[
				sprintf("the upgrade of %s goes from %s (%s) to %s (%s): major version %d to %d", [_package, from, _from.name, to, _to.name, _part(from, 0), _part(to, 0)]),
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
		sprintf("the upgrade of %s from %s to %s crosses a minor version; it waits for an admin (override MinorVersionUpgrade on the %s) or holdMinor: false", [_package, from, to, _words.gate]),
		array.concat(
			[
				sprintf("the upgrade of %s goes from %s (%s) to %s (%s): minor version %d.%d to %d.%d", [_package, from, _from.name, to, _to.name, _part(from, 0), _part(from, 1), _part(to, 0), _part(to, 1)]),
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
	some which, end in _unknown_ends
	why := _unknown_why(end)
	denial := _denial(
		rego.metadata.rule(),
		sprintf("cannot tell the version of the %s %s %s (%s), so the version policy cannot clear it", [which, _words.unit, end.name, why]),
		[sprintf("no version is known for the %s %s %s: %s", [which, _words.unit, end.name, why])],
		[_unknown_remedy[which]],
	)
}

# _unknown_why is where the version was looked for (move.*.versionFrom says why it is null), or,
# for a version that is no semantic version, what it is and where it was read.
_unknown_why(end) := sprintf("its version %v, read from %s, is not a semantic version", [end.version, end.versionFrom]) if {
	end.version != null
} else := end.versionFrom

_unknown_remedy["target"] := {"text": sprintf(_words.targetRemedy, [_to.name])}

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

# --- the move --------------------------------------------------------------------------------

# input.move is the one transition the document judges, in one shape for OLM v0 (a CSV an
# InstallPlan creates and the CSV it replaces) and OLM v1 (a ClusterExtension's installed bundle
# and a candidate): {namespace, installPlan, from, to}, from null on a first install, move null
# when nothing moves. Go reads each end's version (tolerantly, as OLM parses it) and says where
# in versionFrom; a null version is unknown. The pack judges a move and nothing else.
_move := m if {
	m := object.get(input, "move", null)
	is_object(m)
}

_applies if {
	_move
	count(_config_errors) == 0
}

# _to is the CSV (bundle) the move creates; _from the one it replaces, undefined on a first
# install. Each is {name, version, versionFrom} at least, with defaults for what is missing.
_to := _end(object.get(_move, "to", null))

_from := _end(_move.from) if is_object(_move.from)

_end(e) := object.union({"name": "", "package": "", "version": null, "versionFrom": "nowhere: the move does not say"}, e) if is_object(e)

else := {"name": "", "package": "", "version": null, "versionFrom": "nowhere: the move does not say"}

# The package whose settings apply: the one the move installs.
_package := _to.package

# How the documents name things is all that differs between the OLMs here: OLM v1 installs
# bundles, takes overrides on an ExtensionGate, and reads a bundle's version from its
# olm.package property.
_words := {
	"gate": "ExtensionGate",
	"unit": "bundle",
	"targetRemedy": "the catalog gives bundle %s a semantic version (its olm.package property)",
} if {
	input.apiVersion == "tollgate.dev/extension/v1"
} else := {
	"gate": "UpgradeGate",
	"unit": "CSV",
	"targetRemedy": "the source catalog's PackageManifest lists %s with currentCSVDesc.version",
}

# --- versions --------------------------------------------------------------------------------

# The version the move brings, and the one it replaces (the installed CSV's, or without one the
# CSV the plan replaces): a semantic version, undefined when unknown or not semantic.
_target_version := _semver(_to.version)

_installed_version := _semver(_from.version)

_unknown_ends["target"] := _to if not _target_version

_unknown_ends["installed"] := _from if {
	not _installed_version
	_uses_installed_version
}

_uses_installed_version if _setting("holdMajor", true) == true

_uses_installed_version if _setting("holdMinor", false) == true

# _version_facts say where each version a denial rests on was read (move.*.versionFrom, which
# says so when the version was read from the CSV's name).
_version_facts := [sprintf("the version of %s (%s) is read from %s", [end.name, v, end.versionFrom]) |
	some end in array.concat([_from | _from], [_to])
	v := _semver(end.version)
]

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
