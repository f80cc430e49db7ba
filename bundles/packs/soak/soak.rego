# METADATA
# title: Soak time
# description: |
#   Holds an operator upgrade until the version it brings has been known for a soak time, so
#   other clusters (or the community) meet its problems first. "Known" is, by default, the
#   earliest time the cluster saw it: the creation of the new CSV or of an InstallPlan that
#   lists it. With basis "published" the CSV's createdAt annotation counts instead (RFC 3339,
#   YYYY-MM-DD HH:MM:SS or YYYY-MM-DD); when it is missing or cannot be read the upgrade is held
#   as SoakStartUnknown. It judges input.move, the same shape for OLM v0 and v1; only the
#   evidence of when a version became known differs between them (an extension document has
#   none: SoakStartUnknown). Configured under data.tollgate.config.packs.soak; the default soak
#   time is 24 hours, first installs are not held. input.now is the clock.
package tollgate.packs.soak

# METADATA
# title: The new version has not soaked long enough
# custom:
#   code: SoakTimeNotElapsed
deny contains denial if {
	_applies
	_soak_ns > 0
	since := _since
	_now_ns < since.at + _soak_ns
	denial := _denial(
		rego.metadata.rule(),
		sprintf("%s has been known for %s (since %s, %s); it must soak %s, until %s", [_subject, _duration(_now_ns - since.at), time.format(since.at), since.evidence, _duration(_soak_ns), time.format(since.at + _soak_ns)]),
		[
			sprintf("%s is known since %s, %s; it is %s (input.now)", [_subject, time.format(since.at), since.evidence, input.now]),
			_soak_fact,
		],
		[
			{"text": sprintf("wait until %s, when %s has soaked %s", [time.format(since.at + _soak_ns), _subject, _duration(_soak_ns)])},
			{
				"text": sprintf("or an admin lowers the soak time of package %s to %v hours or less (packages.%s.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):", [_package, floor((_now_ns - since.at) / 36000000000) / 100, _package]),
				"command": _config_command,
			},
		],
	)
}

# METADATA
# title: No timestamp shows since when the cluster knows the new version
# custom:
#   code: SoakStartUnknown
deny contains denial if {
	_applies
	not _extension
	_soak_ns > 0
	_basis == "seen"
	not _since
	denial := _denial(
		rego.metadata.rule(),
		sprintf("cannot tell since when %s is known (no CSV or InstallPlan with a creationTimestamp), so its soak time of %s cannot be checked", [_subject, _duration(_soak_ns)]),
		[
			sprintf("no CSV or InstallPlan with a creationTimestamp shows since when %s is known", [_subject]),
			_soak_fact,
		],
		[
			{"text": sprintf("OLM creates the InstallPlan for %s: its creationTimestamp starts the soak time", [_subject])},
			_no_soak_remedy,
		],
	)
}

# METADATA
# title: The new version's createdAt annotation is missing or cannot be read
# custom:
#   code: SoakStartUnknown
deny contains denial if {
	_applies
	not _extension
	_soak_ns > 0
	_basis == "published"
	not _since
	denial := _denial(
		rego.metadata.rule(),
		sprintf("cannot tell when %s was published (%s), so its soak time of %s cannot be checked", [_subject, _created_at_problem, _duration(_soak_ns)]),
		array.concat(_created_at_facts, [_soak_fact]),
		array.concat(
			[{"text": sprintf("the operator's author publishes %s with a createdAt annotation in a layout the pack reads: %s", [_subject, _layouts])}],
			array.concat([r | r := _seen_remedy], [_no_soak_remedy]),
		),
	)
}

# When a version became known is the one thing here that is not part of the move, and the one
# thing that differs between the OLMs: an OLM v0 document shows it (the new CSV, the plans that
# create it, createdAt), while an extension document (tollgate.dev/extension/v1) carries no
# timestamp of the candidate: no CSV or InstallPlan the cluster created for it, no createdAt
# annotation. The pack cannot tell how long it has been known, so it holds the move (fail
# closed) while a soak time applies to the package.

# METADATA
# title: The soak pack cannot tell since when a ClusterExtension's successor is known
# custom:
#   code: SoakStartUnknown
deny contains denial if {
	_applies
	_extension
	_soak_ns > 0
	name := object.get(input, ["extension", "metadata", "name"], "")
	to := object.get(_to, "version", null)
	denial := _denial(
		rego.metadata.rule(),
		sprintf("cannot tell since when version %v of package %s is known: the extension document of ClusterExtension %s carries no timestamp of its successor bundles, so its soak time of %s cannot be checked", [to, _package, name, _duration(_soak_ns)]),
		[
			sprintf("ClusterExtension %s may move to %v; OLM v1 creates no CSV or InstallPlan before it installs a bundle, and the catalog gives no time for it", [name, to]),
			_soak_fact,
		],
		[
			_no_soak_remedy,
			{"text": "or an admin waives SoakStartUnknown on the ClusterExtension's ExtensionGate once the version has soaked elsewhere"},
		],
	)
}

_extension if input.apiVersion == "tollgate.dev/extension/v1"

_layouts := "RFC 3339 (2019-08-19T12:00:00Z), 2019-08-19 12:00:00 (UTC) or 2019-08-19 (midnight UTC)"

# The createdAt annotations of the new version, as [where, value]: on its CSV, and on its
# channel entries in the PackageManifest.
_created_at_found contains ["on its CSV", value] if {
	input.currentCSV.metadata.name == _to_name
	value := input.currentCSV.metadata.annotations.createdAt
}

_created_at_found contains [sprintf("in channel %v of the PackageManifest", [channel.name]), value] if {
	some channel in object.get(input, ["packageManifest", "status", "channels"], [])
	channel.currentCSV == _to_name
	value := channel.currentCSVDesc.annotations.createdAt
}

_created_at_problem := "it has no createdAt annotation" if {
	count(_created_at_found) == 0
} else := "its createdAt annotation is not in a layout the pack reads"

_created_at_facts := [sprintf("%s has no createdAt annotation, neither on its CSV nor in the PackageManifest", [_subject])] if {
	count(_created_at_found) == 0
} else := [sprintf("the createdAt annotation of %s %s is %s, which is not in a layout the pack reads: %s", [_subject, found[0], _quoted(found[1]), _layouts]) |
	some found in _created_at_found
]

_quoted(v) := sprintf("%q", [v]) if is_string(v)

else := sprintf("%v", [v])

# _seen_remedy counts from when the cluster first saw the new version instead, when it did.
_seen_remedy := {
	"text": sprintf(
		"or an admin sets basis: seen in data.tollgate.config.packs.soak, so that the soak time counts from when the cluster first saw %s: since %s, %s, so until %s (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
		[_subject, time.format(seen.at), seen.evidence, time.format(seen.at + _soak_ns)],
	),
	"command": _config_command,
} if {
	seen := _earliest(_seen)
}

# _no_soak_remedy turns the soak time of the package off.
_no_soak_remedy := {
	"text": sprintf("or an admin sets the soak time of package %s to 0 (packages.%s.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):", [_package, _package]),
	"command": _config_command,
}

# _soak_fact names the soak time and the setting it comes from.
_soak_fact := sprintf("package %s must soak %s (%s)", [_package, _duration(_soak_ns), _hours_setting])

_hours_setting := sprintf("packages.%s.hours in data.tollgate.config.packs.soak", [_package]) if {
	object.get(_settings, ["packages", _package, "hours"], null) != null
} else := "hours in data.tollgate.config.packs.soak" if {
	object.get(_settings, "hours", null) != null
} else := "the default"

# METADATA
# title: The soak configuration cannot be understood
# custom:
#   code: SoakConfigInvalid
deny contains denial if {
	some msg in _config_errors
	denial := _denial(
		rego.metadata.rule(),
		sprintf("soak time (data.tollgate.config.packs.soak): %s; upgrades are held until it is fixed", [msg]),
		[sprintf("data.tollgate.config.packs.soak: %s", [msg])],
		[{"text": "an admin fixes data.tollgate.config.packs.soak as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):", "command": _config_command}],
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

_config := data.tollgate.config.packs.soak

# _settings is the configuration when it is an object, else {} (and a configuration error), so
# that no lookup below raises a built-in error on it.
_settings := _config if is_object(_config)

else := {}

_default_hours := 24

# The package whose soak time applies: the one the move installs.
_package := object.get(_to, "package", "")

_hours := object.get(_settings, ["packages", _package, "hours"], object.get(_settings, "hours", _default_hours))

_soak_ns := _hours * 3600000000000 if is_number(_hours)

_basis := object.get(_settings, "basis", "seen")

default _first_install_applies := false

_first_install_applies := object.get(_settings, "firstInstall", false)

_config_errors contains "the configuration is not an object" if not is_object(_config)

_config_errors contains "firstInstall is not a boolean" if not is_boolean(_first_install_applies)

_config_errors contains msg if {
	not _basis in {"seen", "published"}
	msg := sprintf("basis is %v, want seen or published", [_basis])
}

_config_errors contains "packages is not an object mapping package names to settings" if not is_object(object.get(_settings, "packages", {}))

_config_errors contains msg if {
	some name, settings in object.get(_settings, "packages", {})
	not is_object(settings)
	msg := sprintf("packages.%s is not an object", [name])
}

_config_errors contains msg if {
	some where, hours in _all_hours
	not _valid_hours(hours)
	msg := sprintf("%s is %v, want a number of hours, 0 or more", [where, hours])
}

_all_hours["hours"] := object.get(_settings, "hours", _default_hours)

_all_hours[sprintf("packages.%s.hours", [name])] := object.get(settings, "hours", _default_hours) if {
	some name, settings in object.get(_settings, "packages", {})
	is_object(settings)
}

_valid_hours(h) if {
	is_number(h)
	h >= 0
}

_config_errors contains msg if {
	not _now_ns
	msg := sprintf("input.now %v is not an RFC 3339 time, so no soak time can be checked", [object.get(input, "now", null)])
}

_now_ns := _rfc3339_ns(input.now)

# --- when the new version became known -----------------------------------------------------------

# An OLM v0 document shows when the cluster knew the CSV the move creates (move.to.name): the
# CSV object, when it exists already, and the InstallPlans that create it. Evidence, as {at,
# evidence}.
_seen contains {"at": at, "evidence": "when its CSV was created"} if {
	input.currentCSV.metadata.name == _to_name
	at := _rfc3339_ns(input.currentCSV.metadata.creationTimestamp)
}

_seen contains {"at": at, "evidence": sprintf("when InstallPlan %s was created", [plan.metadata.name])} if {
	some plan in _plans
	at := _rfc3339_ns(plan.metadata.creationTimestamp)
}

# A plan counts when it lists the new CSV, or is the plan that makes the move (move.installPlan):
# the pending plans and the referenced one.
_plans contains plan if {
	some plan in array.concat(object.get(input, "pendingInstallPlans", []), [p | p := input.installPlan; is_object(p)])
	_makes_the_move(plan)
}

_makes_the_move(plan) if _to_name in object.get(plan, ["spec", "clusterServiceVersionNames"], [])

_makes_the_move(plan) if {
	object.get(plan, ["metadata", "name"], "") == object.get(_move, "installPlan", null)
}

_published contains {"at": at, "evidence": "by its createdAt annotation"} if {
	input.currentCSV.metadata.name == _to_name
	at := _time_ns(input.currentCSV.metadata.annotations.createdAt)
}

_published contains {"at": at, "evidence": "by its createdAt annotation in the PackageManifest"} if {
	some channel in object.get(input, ["packageManifest", "status", "channels"], [])
	channel.currentCSV == _to_name
	at := _time_ns(channel.currentCSVDesc.annotations.createdAt)
}

_earliest(evidence) := e if {
	at := min({x.at | some x in evidence})
	e := min({[x.evidence, x] | some x in evidence; x.at == at})[1]
}

# _since is when the soak time starts, by the configured basis; undefined when nothing shows it,
# and on an extension document, which holds no evidence of it (see above).
_since := _earliest(_published) if {
	not _extension
	_basis == "published"
}

_since := _earliest(_seen) if {
	not _extension
	_basis == "seen"
}

# --- timestamps ------------------------------------------------------------------------------

# _time_ns reads a time in a layout operator authors write in createdAt: RFC 3339
# (2019-08-19T12:00:00Z, with a fraction or an offset; a space may stand for the T), a date
# and time without a zone (2019-08-19 12:00:00 or 2019-08-19T12:00:00), read as UTC, or a bare
# date (2019-08-19), read as midnight UTC. Undefined for anything else: a regular expression
# checks the string before a time built-in sees it, so a missing, empty or garbled time never
# raises a built-in error (which the engine would turn into a PolicyError that no override
# lifts). It accepts real calendar dates only (leap years included), hours 00-23, minutes and
# seconds 00-59, offsets up to ±23:59, and the years nanoseconds since the epoch can hold
# (1678-2261).
_time_ns(s) := time.parse_rfc3339_ns(replace(s, " ", "T")) if {
	_in_range(s)
	regex.match(_zoned_re, s)
}

_time_ns(s) := time.parse_ns("2006-01-02 15:04:05", replace(s, "T", " ")) if {
	_in_range(s)
	regex.match(_unzoned_re, s)
}

_time_ns(s) := time.parse_ns("2006-01-02", s) if {
	_in_range(s)
	regex.match(_date_re, s)
}

# _rfc3339_ns reads an RFC 3339 time only (input.now, creationTimestamp), checked the same way.
_rfc3339_ns(s) := time.parse_rfc3339_ns(s) if {
	_in_range(s)
	regex.match(_rfc3339_re, s)
}

_in_range(s) if {
	is_string(s)
	s >= "1678"
	s < "2262"
}

_date := `([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)`

_clock := `([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?`

_zone := `(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])`

_rfc3339_re := concat("", ["^", _date, "T", _clock, _zone, "$"])

_zoned_re := concat("", ["^", _date, "[T ]", _clock, _zone, "$"])

_unzoned_re := concat("", ["^", _date, "[T ]", _clock, "$"])

_date_re := concat("", ["^", _date, "$"])

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

_applies if {
	_from
	count(_config_errors) == 0
}

_applies if {
	_first_install
	count(_config_errors) == 0
	_first_install_applies == true
}

_to_name := object.get(_to, "name", "")

_subject := _to_name if _to_name != ""

else := "the pending install"

_duration(ns) := sprintf("%dh%02dm", [h, m]) if {
	total := ceil(ns / 60000000000)
	h := floor(total / 60)
	m := total % 60
}

# --- recheckAt -------------------------------------------------------------------------------

# recheck_at is the instant at which this pack's decision could change with time alone, in Unix
# nanoseconds: the end of the soak time, while it has not ended. tollgate.main reports the
# earliest instant of every package after input.now as recheckAt, and the controller evaluates
# the gate again then. Nothing when the soak time has ended or its start is unknown (the denial
# stands until a timestamp or the configuration changes), or the pack holds nothing.
recheck_at contains at if {
	_applies
	_soak_ns > 0
	at := _since.at + _soak_ns
	at > _now_ns
}
