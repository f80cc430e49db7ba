# METADATA
# title: Change freezes
# description: |
#   Holds operator upgrades, and by default first installs too, during the freeze periods
#   configured under data.tollgate.config.packs.freeze.periods: [{start, end, reason}], times in
#   RFC 3339, start inclusive and end exclusive. Without periods the pack holds nothing. It
#   judges input.move, the same shape for OLM v0 and v1: a move changes the package it installs
#   and the package whose CSV it replaces. input.now is the clock.
package tollgate.packs.freeze

# METADATA
# title: A change freeze is in force
# custom:
#   code: ChangeFreeze
deny contains denial if {
	_applies
	count(_config_errors) == 0
	some p in _periods
	p.start <= _now_ns
	_now_ns < p.end
	denial := _denial(
		rego.metadata.rule(),
		sprintf("%s is frozen until %s: %s", [_subject, p.endText, p.reason]),
		array.concat(
			[sprintf("the change freeze from %s until %s is in force at %s (input.now): %s", [p.startText, p.endText, input.now, p.reason])],
			[f | f := _replaced_package_fact(p)],
		),
		array.concat(
			[
				{"text": sprintf("wait until %s, when this freeze ends", [p.endText])},
				{"text": "or an admin ends or removes the period in data.tollgate.config.packs.freeze.periods (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command},
			],
			[r | _first_install; r := _first_install_remedy],
		),
	)
}

# A first install is held only because firstInstall is true (the default).
_first_install_remedy := {
	"text": "or an admin sets firstInstall: false in data.tollgate.config.packs.freeze, so that freezes let first installs through:",
	"command": _config_command,
}

# METADATA
# title: The change freeze configuration cannot be understood
# custom:
#   code: FreezeConfigInvalid
deny contains denial if {
	some msg in _config_errors
	denial := _denial(
		rego.metadata.rule(),
		sprintf("change freezes (data.tollgate.config.packs.freeze): %s; upgrades are held until it is fixed", [msg]),
		[sprintf("data.tollgate.config.packs.freeze: %s", [msg])],
		[{"text": "an admin fixes data.tollgate.config.packs.freeze as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command}],
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

_config := data.tollgate.config.packs.freeze

# _settings is the configuration when it is an object, else {} (and a configuration error), so
# that no lookup raises a built-in error on it.
_settings := _config if is_object(_config)

else := {}

_raw_periods := object.get(_settings, "periods", [])

# A freeze holds new operators too unless firstInstall is false.
default _first_install_applies := true

_first_install_applies := object.get(_settings, "firstInstall", true)

_config_errors contains "the configuration is not an object" if not is_object(_config)

_config_errors contains "periods is not a list" if not is_array(_raw_periods)

_config_errors contains "firstInstall is not a boolean" if not is_boolean(_first_install_applies)

_config_errors contains msg if {
	some i, p in _raw_periods
	not is_object(p)
	msg := sprintf("periods[%d] is not an object", [i])
}

_config_errors contains msg if {
	some i, p in _raw_periods
	is_object(p)
	some field in ["start", "end"]
	not _time(object.get(p, field, null))
	msg := sprintf("periods[%d].%s is %v, want an RFC 3339 time such as 2024-12-20T00:00:00Z", [i, field, object.get(p, field, null)])
}

_config_errors contains msg if {
	some i, p in _raw_periods
	_time(p.end) <= _time(p.start)
	msg := sprintf("periods[%d] ends (%s) before it starts (%s)", [i, p.end, p.start])
}

_config_errors contains msg if {
	some i, p in _raw_periods
	is_object(p)
	some field in ["namespaces", "packages"]
	not is_array(object.get(p, field, []))
	msg := sprintf("periods[%d].%s is not a list", [i, field])
}

_config_errors contains msg if {
	some i, p in _raw_periods
	is_object(p)
	not is_string(object.get(p, "reason", ""))
	msg := sprintf("periods[%d].reason is not a string", [i])
}

_config_errors contains msg if {
	not _now_ns
	_raw_periods != []
	msg := sprintf("input.now %v is not an RFC 3339 time, so no freeze can be checked", [object.get(input, "now", null)])
}

# _time is an RFC 3339 time in nanoseconds since the epoch; undefined for anything else. A
# regular expression checks the string before time.parse_rfc3339_ns sees it, so a garbled time
# never raises a built-in error: real calendar dates only (leap years included), hours 00-23,
# minutes and seconds 00-59, offsets up to ±23:59, years 1678-2261 (what nanoseconds since the
# epoch can hold).
_time(s) := time.parse_rfc3339_ns(s) if {
	is_string(s)
	s >= "1678"
	s < "2262"
	regex.match(_rfc3339, s)
}

_rfc3339 := `^([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`

# The periods that hold this move: those of its namespace and of a package it changes.
_periods contains {"start": _time(p.start), "end": _time(p.end), "startText": p.start, "endText": p.end, "reason": _reason(p), "packages": object.get(p, "packages", [])} if {
	some p in _raw_periods
	is_object(p)
	_selects(p)
}

_reason(p) := r if {
	r := object.get(p, "reason", "")
	r != ""
} else := "change freeze"

_selects(p) if {
	_in_list_or_absent(p, "namespaces", _namespace)
	_in_list_or_absent(p, "packages", _to_package)
}

# Replacing a CSV of a frozen package is a change to that package, whatever the new CSV's.
_selects(p) if {
	_in_list_or_absent(p, "namespaces", _namespace)
	_from_package in object.get(p, "packages", [])
}

_in_list_or_absent(p, field, _) if object.get(p, field, []) == []

_in_list_or_absent(p, field, value) if value in object.get(p, field, [])

# _replaced_package_fact says why a period that names packages holds a move that installs none
# of them: the move replaces a CSV of one.
_replaced_package_fact(p) := sprintf("the freeze covers package %s, whose CSV %s the move replaces", [_from_package, _from.name]) if {
	p.packages != []
	not _to_package in p.packages
}

_now_ns := _time(input.now)

# --- the move --------------------------------------------------------------------------------

# input.move is the one transition the document judges, in one shape for OLM v0 (a CSV an
# InstallPlan creates and the CSV it replaces) and OLM v1 (a ClusterExtension's installed bundle
# and a candidate): {namespace, installPlan, from, to}, from null on a first install, move null
# when nothing moves. The pack holds a move and nothing else.
_move := m if {
	m := object.get(input, "move", null)
	is_object(m)
}

_to := t if {
	t := object.get(_move, "to", null)
	is_object(t)
} else := {}

_from := f if {
	f := object.get(_move, "from", null)
	is_object(f)
}

_first_install if {
	_move
	not _from
}

_namespace := object.get(_move, "namespace", "")

_to_package := object.get(_to, "package", "")

_from_package := p if {
	p := object.get(_from, "package", "")
	p != ""
}

_applies if _from

_applies if {
	_first_install
	_first_install_applies == true
}

# How a denial names the move: OLM v0 by the CSV it creates, OLM v1 by the ClusterExtension and
# the version, as each one's users know it. The wording is all that differs between the OLMs.
_subject := sprintf("the upgrade of ClusterExtension %s to %v", [_extension_name, _to_version]) if {
	_extension
	_from
} else := sprintf("the install of ClusterExtension %s at %v", [_extension_name, _to_version]) if {
	_extension
} else := "the pending install" if {
	object.get(_to, "name", "") == ""
} else := sprintf("the upgrade to %s", [_to.name]) if {
	_from
} else := sprintf("the install of %s", [_to.name])

_extension if input.apiVersion == "tollgate.dev/extension/v1"

_extension_name := object.get(input, ["extension", "metadata", "name"], "")

_to_version := object.get(_to, "version", null)

# --- recheckAt -------------------------------------------------------------------------------

# recheck_at are the instants at which this pack's decision could change with time alone, in
# Unix nanoseconds: the start and the end of every freeze that holds this move and has not
# ended. tollgate.main reports the earliest one after input.now as recheckAt, and the
# controller evaluates the gate again then. Nothing while the pack holds nothing (no change
# moves) or its configuration is invalid (the denial stands until the configuration changes).
recheck_at contains at if {
	_applies
	count(_config_errors) == 0
	some p in _periods
	some at in [p.start, p.end]
	at > _now_ns
}
