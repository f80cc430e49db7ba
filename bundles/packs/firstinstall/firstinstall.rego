# METADATA
# title: First-install approval
# description: |
#   Holds the first install of an operator (a move that replaces no CSV: input.move.from is
#   null) until an admin signs it off, by overriding FirstInstallNotApproved on its UpgradeGate,
#   or until an allow rule in data.tollgate.config.packs.firstinstall.allow matches its
#   namespace, package and source catalog. Upgrades of installed operators are not this pack's
#   concern. Without configuration every first install is held.
package tollgate.packs.firstinstall

# METADATA
# title: A first install has not been approved
# custom:
#   code: FirstInstallNotApproved
deny contains denial if {
	_first_install
	count(_config_errors) == 0
	not _allowed
	denial := _denial(
		rego.metadata.rule(),
		sprintf("%s is a first install of package %s from %s in namespace %s; no allow rule matches, so it waits for an admin to override FirstInstallNotApproved on the UpgradeGate", [_subject, _package, _source, _namespace]),
		[
			sprintf("%s replaces no CSV in namespace %s (the move has no from), so it is a first install of package %s from catalog %s", [_subject, _namespace, _package, _source]),
			_rules_fact,
		],
		[{
			"text": sprintf(
				"an admin adds an allow rule that matches it, e.g. {\"namespace\": %q, \"package\": %q}, to data.tollgate.config.packs.firstinstall.allow (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
				[_namespace, _package],
			),
			"command": _config_command,
		}],
	)
}

_rules_fact := "data.tollgate.config.packs.firstinstall.allow has no rules, so every first install is held" if {
	count(_rules) == 0
} else := sprintf("none of the %d allow rules in data.tollgate.config.packs.firstinstall.allow matches namespace %s, package %s and source %s", [count(_rules), _namespace, _package, _source])

# METADATA
# title: The first-install configuration cannot be understood
# custom:
#   code: FirstInstallConfigInvalid
deny contains denial if {
	some msg in _config_errors
	denial := _denial(
		rego.metadata.rule(),
		sprintf("first-install approval (data.tollgate.config.packs.firstinstall): %s; first installs are held until it is fixed", [msg]),
		[sprintf("data.tollgate.config.packs.firstinstall: %s", [msg])],
		[{"text": "an admin fixes data.tollgate.config.packs.firstinstall as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command}],
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

_config := data.tollgate.config.packs.firstinstall

# _settings is the configuration when it is an object, else {} (and a configuration error), so
# that no lookup raises a built-in error on it.
_settings := _config if is_object(_config)

else := {}

_rules := object.get(_settings, "allow", [])

_fields := {"namespace", "package", "source"}

_config_errors contains "the configuration is not an object" if not is_object(_config)

_config_errors contains "allow is not a list" if not is_array(_rules)

_config_errors contains msg if {
	some i, rule in _rules
	not is_object(rule)
	msg := sprintf("allow[%d] is not an object", [i])
}

_config_errors contains msg if {
	some i, rule in _rules
	rule == {}
	msg := sprintf("allow[%d] is empty; write {\"package\": \"*\"} to allow every first install", [i])
}

_config_errors contains msg if {
	some i, rule in _rules
	some key, _ in rule
	not key in _fields
	msg := sprintf("allow[%d] has unknown key %v, want namespace, package or source", [i, key])
}

_config_errors contains msg if {
	some i, rule in _rules
	some key, pattern in rule
	key in _fields
	not is_string(pattern)
	msg := sprintf("allow[%d].%s is not a string", [i, key])
}

_config_errors contains msg if {
	some i, rule in _rules
	some key, pattern in rule
	key in _fields
	is_string(pattern)
	not _glob(pattern)
	msg := sprintf("allow[%d].%s %q is not a pattern the pack reads: use * and ?, one class such as [abc], [a-z] or [!a], alternatives such as {a,b}, and \\ before any other [, ], { or }", [i, key, pattern])
}

# _glob holds for a pattern glob.match compiles, checked without calling it (an invalid pattern
# would raise a built-in error): literal characters, * and ?, escapes (\x), a class of listed
# characters or of one range whose ends are in order ([abc], [!abc], [a-z]), and alternatives
# without nesting ({a,b*}).
_glob(pattern) if {
	regex.match(`^([^\[\]{}\\]|\\.|\[!?([^\[\]\\-]-[^\[\]\\-]|[^\[\]\\-]+)\]|\{[^\[\]{}\\]*\})*$`, pattern)
	every m in regex.find_all_string_submatch_n(`\[!?([^\[\]\\-])-([^\[\]\\-])\]`, pattern, -1) {
		m[1] <= m[2]
	}
}

# --- the move --------------------------------------------------------------------------------

# input.move is the one transition the document judges, in one shape for OLM v0 (a CSV an
# InstallPlan creates and the CSV it replaces) and OLM v1 (a ClusterExtension's installed bundle
# and a candidate): {namespace, installPlan, from, to}, from null on a first install, move null
# when nothing moves. A first install is a move from nothing: a new Subscription's, a new
# dependency's, a CSV step that replaces nothing; a Subscription deleted and created again whose
# plan replaces a CSV that still runs is an upgrade.
_move := m if {
	m := object.get(input, "move", null)
	is_object(m)
}

_to := t if {
	t := object.get(_move, "to", null)
	is_object(t)
} else := {}

# An extension document (tollgate.dev/extension/v1) is not this pack's, whatever its move: the
# one thing that differs between the OLMs here is that Tollgate never installs an extension (its
# first install is at the admin's version pin, and tollgate.extension holds every document of an
# extension without an installed bundle as ExtensionNotInstalled, never overridden).
_first_install if {
	_move
	not is_object(object.get(_move, "from", null))
	not _extension
}

_extension if input.apiVersion == "tollgate.dev/extension/v1"

_namespace := object.get(_move, "namespace", "")

_package := object.get(_to, "package", "")

# The catalog the new CSV comes from, as namespace/name.
_source := sprintf("%s/%s", [object.get(_to, ["catalog", "namespace"], ""), object.get(_to, ["catalog", "name"], "")])

_values := {"namespace": _namespace, "package": _package, "source": _source}

# A rule allows when each of its keys matches (glob patterns, * matches anything).
_allowed if {
	some rule in _rules
	every key, pattern in rule {
		glob.match(pattern, [], _values[key])
	}
}

_subject := n if {
	n := object.get(_to, "name", "")
	n != ""
} else := "the pending install"
