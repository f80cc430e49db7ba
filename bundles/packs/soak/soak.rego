# METADATA
# title: Soak time
# description: |
#   Holds an operator upgrade until the version it brings has been known for a soak time, so
#   other clusters (or the community) meet its problems first. "Known" is, by default, the
#   earliest time the cluster saw it: the creation of the new CSV or of an InstallPlan that
#   lists it. With basis "published" the CSV's createdAt annotation counts instead, when it
#   can be read. Configured under data.tollgate.config.packs.soak; the default soak time is
#   24 hours, first installs are not held. input.now is the clock.
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
		sprintf("%s has been known for %s (since %s, %s); it must soak %s, until %s", [_current_name, _duration(_now_ns - since.at), time.format(since.at), since.evidence, _duration(_soak_ns), time.format(since.at + _soak_ns)]),
		[
			sprintf("%s is known since %s, %s; it is %s (input.now)", [_current_name, time.format(since.at), since.evidence, input.now]),
			_soak_fact,
		],
		[
			{"text": sprintf("wait until %s, when %s has soaked %s", [time.format(since.at + _soak_ns), _current_name, _duration(_soak_ns)])},
			{
				"text": sprintf("or an admin lowers the soak time of package %s to %v hours or less (packages.%s.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):", [_package, floor((_now_ns - since.at) / 36000000000) / 100, _package]),
				"command": _config_command,
			},
		],
	)
}

# METADATA
# title: The new version's age cannot be told
# custom:
#   code: SoakTimeNotElapsed
deny contains denial if {
	_applies
	_soak_ns > 0
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
			{
				"text": sprintf("or an admin sets the soak time of package %s to 0 (packages.%s.hours in data.tollgate.config.packs.soak; the ConfigMaps labelled tollgate.dev/policy=data hold it):", [_package, _package]),
				"command": _config_command,
			},
		],
	)
}

# _soak_fact names the soak time and the setting it comes from.
_soak_fact := sprintf("package %s must soak %s (%s)", [_package, _duration(_soak_ns), _hours_setting])

_hours_setting := sprintf("packages.%s.hours in data.tollgate.config.packs.soak", [_package]) if {
	object.get(_config, ["packages", _package, "hours"], null) != null
} else := "hours in data.tollgate.config.packs.soak" if {
	object.get(_config, "hours", null) != null
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

_default_hours := 24

_package := object.get(input, ["subscription", "spec", "name"], "")

_hours := object.get(_config, ["packages", _package, "hours"], object.get(_config, "hours", _default_hours))

_soak_ns := _hours * 3600000000000

_basis := object.get(_config, "basis", "seen")

default _first_install_applies := false

_first_install_applies := object.get(_config, "firstInstall", false)

_config_errors contains "the configuration is not an object" if not is_object(_config)

_config_errors contains "firstInstall is not a boolean" if not is_boolean(_first_install_applies)

_config_errors contains msg if {
	not _basis in {"seen", "published"}
	msg := sprintf("basis is %v, want seen or published", [_basis])
}

_config_errors contains "packages is not an object mapping package names to settings" if not is_object(object.get(_config, "packages", {}))

_config_errors contains msg if {
	some where, hours in _all_hours
	not _valid_hours(hours)
	msg := sprintf("%s is %v, want a number of hours, 0 or more", [where, hours])
}

_all_hours["hours"] := object.get(_config, "hours", _default_hours)

_all_hours[sprintf("packages.%s.hours", [name])] := object.get(settings, "hours", _default_hours) if {
	some name, settings in object.get(_config, "packages", {})
}

_valid_hours(h) if {
	is_number(h)
	h >= 0
}

_config_errors contains msg if {
	not _now_ns
	msg := sprintf("input.now %v is not an RFC 3339 time, so no soak time can be checked", [object.get(input, "now", null)])
}

_now_ns := time.parse_rfc3339_ns(input.now)

# --- when the new version became known -----------------------------------------------------------

# Evidence that the cluster knew the CSV at a time, as {at, evidence}.
_seen contains {"at": time.parse_rfc3339_ns(input.currentCSV.metadata.creationTimestamp), "evidence": "when its CSV was created"} if {
	input.currentCSV.metadata.name == _current_name
}

_seen contains {"at": time.parse_rfc3339_ns(plan.metadata.creationTimestamp), "evidence": sprintf("when InstallPlan %s was created", [plan.metadata.name])} if {
	some plan in _plans
}

# The referenced plan counts when it lists the new CSV; pending plans always do.
_plans contains plan if some plan in object.get(input, "pendingInstallPlans", [])

_plans contains input.installPlan if _current_name in object.get(input, ["installPlan", "spec", "clusterServiceVersionNames"], [])

_published contains {"at": at, "evidence": "by its createdAt annotation"} if {
	input.currentCSV.metadata.name == _current_name
	at := _created_at(input.currentCSV.metadata.annotations.createdAt)
}

_published contains {"at": at, "evidence": "by its createdAt annotation in the PackageManifest"} if {
	some channel in object.get(input, ["packageManifest", "status", "channels"], [])
	channel.currentCSV == _current_name
	at := _created_at(channel.currentCSVDesc.annotations.createdAt)
}

# Operator authors write createdAt in several layouts; read the common ones.
_created_at(s) := time.parse_rfc3339_ns(s)

_created_at(s) := time.parse_ns("2006-01-02 15:04:05", s) if not time.parse_rfc3339_ns(s)

_created_at(s) := time.parse_ns("2006-01-02", s) if {
	not time.parse_rfc3339_ns(s)
	not time.parse_ns("2006-01-02 15:04:05", s)
}

_earliest(evidence) := e if {
	at := min({x.at | some x in evidence})
	e := min({[x.evidence, x] | some x in evidence; x.at == at})[1]
}

_since := _earliest(_published) if {
	_basis == "published"
	count(_published) > 0
} else := _earliest(_seen)

# --- which Subscriptions the pack looks at -------------------------------------------------------

_installed_name := n if {
	n := object.get(input, ["subscription", "status", "installedCSV"], "")
	is_string(n)
	n != ""
}

_current_name := n if {
	n := object.get(input, ["subscription", "status", "currentCSV"], "")
	is_string(n)
	n != ""
}

_upgrade_pending if _current_name != object.get(input, ["subscription", "status", "installedCSV"], "")

_upgrade_pending if count(object.get(input, "pendingInstallPlans", [])) > 0

_applies if {
	_upgrade_pending
	count(_config_errors) == 0
	_installed_name
}

_applies if {
	_upgrade_pending
	count(_config_errors) == 0
	not _installed_name
	_first_install_applies == true
}

_subject := _current_name

_subject := "the pending install" if not _current_name

_duration(ns) := sprintf("%dh%02dm", [h, m]) if {
	total := ceil(ns / 60000000000)
	h := floor(total / 60)
	m := total % 60
}
