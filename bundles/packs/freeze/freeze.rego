# METADATA
# title: Change freezes
# description: |
#   Holds operator upgrades, and by default first installs too, during the freeze periods
#   configured under data.tollgate.config.packs.freeze.periods: [{start, end, reason}], times in
#   RFC 3339, start inclusive and end exclusive. Without periods the pack holds nothing.
#   input.now is the clock.
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
		[sprintf("the change freeze from %s until %s is in force at %s (input.now): %s", [p.startText, p.endText, input.now, p.reason])],
		array.concat(
			[
				{"text": sprintf("wait until %s, when this freeze ends", [p.endText])},
				{"text": "or an admin ends or removes the period in data.tollgate.config.packs.freeze.periods (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command},
			],
			[r | not _installed_name; r := _first_install_remedy],
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

# The periods that hold this Subscription (or ClusterExtension).
_periods contains {"start": _time(p.start), "end": _time(p.end), "startText": p.start, "endText": p.end, "reason": _reason(p)} if {
	some p in _raw_periods
	is_object(p)
	_selects(p)
}

_reason(p) := r if {
	r := object.get(p, "reason", "")
	r != ""
} else := "change freeze"

_namespace := object.get(input, ["extension", "spec", "namespace"], "") if {
	_extension
} else := object.get(input, ["subscription", "metadata", "namespace"], "")

_package := object.get(input, ["extension", "spec", "source", "catalog", "packageName"], "") if {
	_extension
} else := object.get(input, ["subscription", "spec", "name"], "")

_selects(p) if {
	_in_list_or_absent(p, "namespaces", _namespace)
	_in_list_or_absent(p, "packages", _package)
}

_in_list_or_absent(p, field, _) if object.get(p, field, []) == []

_in_list_or_absent(p, field, value) if value in object.get(p, field, [])

_now_ns := _time(input.now)

# --- which Subscriptions the pack looks at -------------------------------------------------------

# An extension document (tollgate.dev/extension/v1) is about a ClusterExtension: its installed
# bundle (input.installed, null on a first install) and a candidate successor (input.candidate;
# null when there is nothing to move to).
_extension if input.apiVersion == "tollgate.dev/extension/v1"

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

_extension_name := object.get(input, ["extension", "metadata", "name"], "")

_candidate_version := object.get(input, ["candidate", "version"], "")

_current_name := n if {
	n := object.get(input, ["subscription", "status", "currentCSV"], "")
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
	_installed_name
}

_applies if {
	_upgrade_pending
	not _installed_name
	_first_install_applies == true
}

_subject := sprintf("the upgrade of ClusterExtension %s to %v", [_extension_name, _candidate_version]) if {
	_extension
	_installed_name
} else := sprintf("the install of ClusterExtension %s at %v", [_extension_name, _candidate_version]) if {
	_extension
} else := "the pending install" if {
	not _current_name
} else := sprintf("the upgrade to %s", [_current_name]) if {
	_installed_name
} else := sprintf("the install of %s", [_current_name])

# --- recheckAt -------------------------------------------------------------------------------

# recheck_at are the instants at which this pack's decision could change with time alone, in
# Unix nanoseconds: the start and the end of every freeze that holds this Subscription and has
# not ended. tollgate.main reports the earliest one after input.now as recheckAt, and the
# controller evaluates the gate again then. Nothing while the pack holds nothing (no change
# pending) or its configuration is invalid (the denial stands until the configuration changes).
recheck_at contains at if {
	_applies
	count(_config_errors) == 0
	some p in _periods
	some at in [p.start, p.end]
	at > _now_ns
}
