# METADATA
# title: Maintenance windows
# description: |
#   Holds operator upgrades until a maintenance window is open. Windows are configured under
#   data.tollgate.config.packs.window.windows; each names days of the week, a start and an end
#   time (HH:MM, local) and an IANA time zone. Without windows the pack holds nothing. The pack
#   judges input.move, the same shape for OLM v0 and v1: an upgrade (a move with a from), and a
#   first install only when firstInstall is true. input.now is the clock.
package tollgate.packs.window

# METADATA
# title: An upgrade is pending while no maintenance window is open
# custom:
#   code: OutsideMaintenanceWindow
deny contains denial if {
	_applies
	count(_windows) > 0
	count(_config_errors) == 0
	not _open
	denial := _denial(
		rego.metadata.rule(),
		_outside_message,
		[sprintf("none of the maintenance windows of this %s is open at %s (input.now): %s", [_kind, input.now, concat("; ", sort([_describe(w) | some w in _windows]))])],
		array.concat(
			[
				{"text": sprintf("wait until the next window opens: %s, in %s", [_next_opening[1], _duration(_next_opening[0] - _now_ns)])},
				{"text": "or an admin adds or widens a window in data.tollgate.config.packs.window.windows (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command},
			],
			[r | _first_install; r := _first_install_remedy],
		),
	)
}

# A first install is held only because firstInstall is true.
_first_install_remedy := {
	"text": "or an admin sets firstInstall: false in data.tollgate.config.packs.window, so that windows hold upgrades only:",
	"command": _config_command,
}

# _describe is a window for a person: "Sat, Sun 02:00-06:00 Europe/Berlin".
_describe(w) := sprintf("%s %s-%s %s", [_describe_days(w.days), w.startText, w.endText, w.zone])

_describe_days(days) := "every day" if {
	count(days) == 7
} else := concat(", ", [_day_names[d] | some d in ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]; d in days])

# METADATA
# title: The maintenance window configuration cannot be understood
# custom:
#   code: WindowConfigInvalid
deny contains denial if {
	some msg in _config_errors
	denial := _denial(
		rego.metadata.rule(),
		sprintf("maintenance windows (data.tollgate.config.packs.window): %s; upgrades are held until it is fixed", [msg]),
		[sprintf("data.tollgate.config.packs.window: %s", [msg])],
		[{"text": "an admin fixes data.tollgate.config.packs.window as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command}],
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

_config := data.tollgate.config.packs.window

# _settings is the configuration when it is an object, else {} (and a configuration error), so
# that no lookup raises a built-in error on it.
_settings := _config if is_object(_config)

else := {}

_raw_windows := object.get(_settings, "windows", [])

# _objects are the windows that are objects (the others are configuration errors), with their
# index in the list.
_objects[i] := w if {
	some i, w in _raw_windows
	is_object(w)
}

default _first_install_applies := false

_first_install_applies := object.get(_settings, "firstInstall", false)

_day_names := {"mon": "Mon", "tue": "Tue", "wed": "Wed", "thu": "Thu", "fri": "Fri", "sat": "Sat", "sun": "Sun"}

_full_day_names := {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

_config_errors contains "the configuration is not an object" if not is_object(_config)

_config_errors contains "windows is not a list" if not is_array(_raw_windows)

_config_errors contains "firstInstall is not a boolean" if not is_boolean(_first_install_applies)

_config_errors contains msg if {
	some i, w in _raw_windows
	not is_object(w)
	msg := sprintf("windows[%d] is not an object", [i])
}

_config_errors contains msg if {
	some i, w in _objects
	some field in ["start", "end"]
	not _minutes(object.get(w, field, null))
	msg := sprintf("windows[%d].%s is %v, want a time HH:MM between 00:00 and 24:00", [i, field, object.get(w, field, null)])
}

_config_errors contains msg if {
	some i, w in _objects
	not _zone_known(_zone(w))
	msg := sprintf("windows[%d].timeZone %v is not an IANA time zone such as Europe/Berlin", [i, _zone(w)])
}

_config_errors contains msg if {
	some i, w in _objects
	days := object.get(w, "days", [])
	not is_array(days)
	msg := sprintf("windows[%d].days is not a list", [i])
}

_config_errors contains msg if {
	some i, w in _objects
	some d in object.get(w, "days", [])
	not _day(d)
	msg := sprintf("windows[%d].days has %v, want Mon, Tue, Wed, Thu, Fri, Sat or Sun", [i, d])
}

_config_errors contains msg if {
	some i, w in _objects
	some field in ["namespaces", "packages"]
	not is_array(object.get(w, field, []))
	msg := sprintf("windows[%d].%s is not a list", [i, field])
}

_config_errors contains msg if {
	not _now_ns
	_raw_windows != []
	msg := sprintf("input.now %v is not an RFC 3339 time, so no window can be checked", [object.get(input, "now", null)])
}

_zone(w) := object.get(w, "timeZone", "UTC")

# _zone_known holds for a time zone time.clock knows. The name's form is checked first, so only
# a well-formed name that is not in the time zone database (a configuration error, reported as
# such) can make time.clock raise a built-in error.
_zone_known(tz) if {
	is_string(tz)
	tz != "Local"
	regex.match(`^([A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*)?$`, tz)
	time.clock([0, tz])
}

# _minutes turns "HH:MM" into minutes since midnight; "24:00" is the end of the day.
_minutes(s) := m if {
	is_string(s)
	regex.match(`^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`, s)
	parts := split(s, ":")
	m := (_two_digits(parts[0]) * 60) + _two_digits(parts[1])
}

# to_number rejects leading zeros ("08"), so prefix a 1 and subtract it again.
_two_digits(s) := to_number(concat("", ["1", s])) - 100

# _day normalises "Sat", "saturday" or "SAT" to "sat".
_day(d) := short if {
	is_string(d)
	short := lower(substring(d, 0, 3))
	_day_names[short]
	lower(d) in ({short} | _full_day_names)
}

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

_applies if _from

_applies if {
	_first_install
	_first_install_applies == true
}

_namespace := object.get(_move, "namespace", "")

_package := object.get(_to, "package", "")

# How a denial names what moves: OLM v0 by the CSV it creates, OLM v1 by the ClusterExtension
# and the version, as each one's users know it. The wording is all that differs between the
# OLMs here.
_extension if input.apiVersion == "tollgate.dev/extension/v1"

_kind := "ClusterExtension" if {
	_extension
} else := "Subscription"

_selects(w) if {
	_in_list_or_absent(w, "namespaces", _namespace)
	_in_list_or_absent(w, "packages", _package)
}

_in_list_or_absent(w, field, _) if object.get(w, field, []) == []

_in_list_or_absent(w, field, value) if value in object.get(w, field, [])

# The windows that hold this move, as {start, end (minutes), startText, endText, days
# (short names), zone}.
_windows contains {"start": _minutes(w.start), "end": _minutes(w.end), "startText": w.start, "endText": w.end, "days": _days(w), "zone": _zone(w)} if {
	some w in _objects
	_selects(w)
}

# No days means every day.
_days(w) := {_day(d) | some d in object.get(w, "days", [])} if object.get(w, "days", []) != []

_days(w) := {s | some s, _ in _day_names} if object.get(w, "days", []) == []

# --- the clock -------------------------------------------------------------------------------

# input.now is checked before time.parse_rfc3339_ns sees it, so a garbled clock is a
# configuration error, never a built-in error: real calendar dates only, hours 00-23, minutes and
# seconds 00-59, offsets up to ±23:59, years 1678-2261.
_now_ns := time.parse_rfc3339_ns(input.now) if {
	is_string(input.now)
	input.now >= "1678"
	input.now < "2262"
	regex.match(_rfc3339, input.now)
}

_rfc3339 := `^([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`

_ns_per_minute := 60000000000

_ns_per_day := 86400000000000

# Local midnight of today in zone tz, as Unix nanoseconds (off by the DST shift on the
# day of a change, which is fine for naming the next opening).
_midnight(tz) := _now_ns - ((((c[0] * 60) + c[1]) * _ns_per_minute) + ((c[2] * 1000000000) + (_now_ns % 1000000000))) if {
	c := time.clock([_now_ns, tz])
}

_minute_of_day(tz) := (c[0] * 60) + c[1] if c := time.clock([_now_ns, tz])

# The short weekday name of the day `offset` days from today in zone tz, taken at local noon so
# a DST shift cannot move it to another day.
_weekday(tz, offset) := lower(substring(time.weekday([(_midnight(tz) + (offset * _ns_per_day)) + (720 * _ns_per_minute), tz]), 0, 3))

# A window is open when today is one of its days and now is between start and end; a window
# whose end is not after its start runs past midnight into the next day.
_open if {
	some w in _windows
	w.start < w.end
	_weekday(w.zone, 0) in w.days
	m := _minute_of_day(w.zone)
	w.start <= m
	m < w.end
}

_open if {
	some w in _windows
	w.end <= w.start
	_weekday(w.zone, 0) in w.days
	w.start <= _minute_of_day(w.zone)
}

_open if {
	some w in _windows
	w.end <= w.start
	_weekday(w.zone, -1) in w.days
	_minute_of_day(w.zone) < w.end
}

# Openings in the coming week as [unix ns, text].
_openings contains [at, text] if {
	some w in _windows
	some offset in numbers.range(0, 7)
	_weekday(w.zone, offset) in w.days
	day_ns := _midnight(w.zone) + (offset * _ns_per_day)
	at := day_ns + (w.start * _ns_per_minute)
	at > _now_ns
	date := time.date([day_ns + (720 * _ns_per_minute), w.zone])
	text := sprintf("%s %04d-%02d-%02d %s %s", [_day_names[_weekday(w.zone, offset)], date[0], date[1], date[2], w.startText, w.zone])
}

_next_opening := min(_openings)

_outside_message := sprintf("%s waits for a maintenance window: none is open at %s; the next opens %s, in %s", [_subject, input.now, _next_opening[1], _duration(_next_opening[0] - _now_ns)])

_subject := sprintf("the upgrade of ClusterExtension %s to %v", [_extension_name, _to_version]) if {
	_extension
	_from
} else := sprintf("the install of ClusterExtension %s at %v", [_extension_name, _to_version]) if {
	_extension
} else := "the pending install" if {
	object.get(_to, "name", "") == ""
} else := sprintf("the upgrade to %s", [_to.name])

_extension_name := object.get(input, ["extension", "metadata", "name"], "")

_to_version := object.get(_to, "version", null)

_duration(ns) := sprintf("%dd%dh%02dm", [d, h, m]) if {
	total := ceil(ns / _ns_per_minute)
	d := floor(total / 1440)
	h := floor((total % 1440) / 60)
	m := total % 60
}

# --- recheckAt -------------------------------------------------------------------------------

# recheck_at are the instants at which this pack's decision could change with time alone, in
# Unix nanoseconds: every opening and closing of the windows that hold this move, from
# yesterday (a window that runs past midnight) to a week ahead. tollgate.main reports the
# earliest one after input.now as recheckAt, and the controller evaluates the gate again then.
# Nothing while the pack holds nothing (nothing moves, no windows) or its configuration is
# invalid (the denial stands until the configuration changes).
recheck_at contains at if {
	_applies
	count(_config_errors) == 0
	some w in _windows
	some offset in numbers.range(-1, 7)
	_weekday(w.zone, offset) in w.days
	some edge in _edges(w)
	approx := (_midnight(w.zone) + (offset * _ns_per_day)) + (edge * _ns_per_minute)
	some at in {approx, _corrected(approx, edge, w.zone)}
	at > _now_ns
}

# _edges are a window's opening and closing, in minutes after the local midnight of a day it
# opens; one that runs past midnight closes the next day.
_edges(w) := {w.start, w.end} if w.start < w.end

else := {w.start, w.end + 1440}

# _corrected moves an instant computed as local midnight plus minutes by a daylight saving
# change in between (_midnight is exact only for today): by the difference, within half a day,
# between the minute wanted and the local clock's minute at the instant. Both instants are
# reported, so that an edge inside a skipped hour is still rechecked, at most an hour late.
_corrected(at, edge, tz) := at + ((((((edge % 1440) - ((c[0] * 60) + c[1])) + 2160) % 1440) - 720) * _ns_per_minute) if {
	c := time.clock([at, tz])
}
