# METADATA
# description: |
#   Tollgate's view of a Subscription (subscription-status.md): the ten abnormal-true condition
#   types, always present with status True, False or Unknown; state; upToDate; catalogStatus.
#   With the corrections DESIGN.md records: ResolutionFailed mirrors OLM's own condition;
#   AtLatestKnown and upToDate need the installed CSV to be current *and* Succeeded.
#
#   Every fact is a rule without arguments, so it is computed once per evaluation, and reads
#   its input field directly with a `default` for what lib.get would give (a ref is undefined
#   where the object is null, missing or not an object). The conditions test the case that
#   settles them first and build only the message they report.
package tollgate.subscription

import data.tollgate.catalogsource
import data.tollgate.lib

# conditions are the ten condition types, in the order of subscription-status.md.
conditions := [
	resolution_failed,
	catalog_sources_unhealthy,
	catalog_source_invalid,
	package_channel_invalid,
	install_plan_failed,
	install_plan_missing,
	install_plan_awaiting_manual_approval,
	installed_csv_replacement_available,
	installed_csv_missing,
	installed_csv_failed,
]

default _package := ""

_package := input.subscription.spec.name

default _plan_ref := null

_plan_ref := input.subscription.status.installPlanRef

default _plan_phase := ""

_plan_phase := input.installPlan.status.phase

default _pending_plans := []

_pending_plans := input.pendingInstallPlans

# ----------------------------------------------------------------------------------------------
# ResolutionFailed: Tollgate does not resolve; it mirrors OLM's own condition, False when none.
# Beside several OperatorGroups, where OLM's resolver fails ("expected 1 OperatorGroup"),
# Tollgate reports it before OLM does (operatorGroups is read with a default: older documents
# lack it).
resolution_failed := {"type": "ResolutionFailed", "status": c.status, "reason": lib.or_else(object.get(c, "reason", ""), "ResolutionFailed"), "message": lib.or_else(object.get(c, "message", ""), "OLM reports that resolution failed")} if {
	c := [x | some x in input.subscription.status.conditions; x.type == "ResolutionFailed"][0]
} else := {"type": "ResolutionFailed", "status": "True", "reason": "TooManyOperatorGroups", "message": sprintf("namespace %s holds %d OperatorGroups; OLM resolves only in a namespace with exactly one", [lib.subscription_namespace, count(input.operatorGroups)])} if {
	count(input.operatorGroups) > 1
} else := {"type": "ResolutionFailed", "status": "False", "reason": "NoFailureReported", "message": "OLM reports no resolution failure for this Subscription"}

# ----------------------------------------------------------------------------------------------
# Catalogs. Healthy means status.connectionState.lastObservedState == "READY"; without a
# connection state the health is Unknown.

# _catalog_health is the health of each of lib.catalog_entries, in the same order: READY is
# True, no lastObservedState ("") Unknown, anything else False.
_catalog_health := [object.get({"READY": "True", "": "Unknown"}, [state], "False") | some [_, _, _, state, _] in lib.catalog_entries]

# catalogStatus is one entry per catalog visible to the Subscription (and its source catalog).
catalog_status := [{
	"namespace": ns,
	"name": n,
	"healthy": health[i],
	"lastObservedState": state,
	"source": key == source_key,
	"valid": count(violations[i]) == 0,
} |
	some i, [key, ns, n, state, _] in lib.catalog_entries
] if {
	health := _catalog_health
	source_key := lib.source_catalog_key
	violations := catalogsource.catalog_violations
}

# _unhealthy and _unobserved name the catalogs of one health; they are read only when
# _catalog_health holds that health, so the common case (every catalog READY) lists nothing.
_unhealthy := [sprintf("%s (%s)", [key, state]) |
	some i, [key, _, _, state, _] in lib.catalog_entries
	health[i] == "False"
] if {
	health := _catalog_health
}

_unobserved := [key |
	some i, [key, _, _, _, _] in lib.catalog_entries
	health[i] == "Unknown"
] if {
	health := _catalog_health
}

# CatalogSourcesUnhealthy looks at every visible catalog, as the reference does, and at the
# Subscription's source catalog: a source catalog that does not exist is unhealthy (OLM reports
# "targeted catalogsource ... missing" in this condition too), and the denial
# CatalogSourceUnhealthy names the same fact. Its message also lists the other catalogs that are
# not READY and those whose health is not yet known.
catalog_sources_unhealthy := {"type": "CatalogSourcesUnhealthy", "status": "True", "reason": "CatalogSourceNotFound", "message": concat("; ", array.concat(
	[sprintf("the source catalog %s (spec.sourceNamespace/spec.source) does not exist: create it, or point spec.source and spec.sourceNamespace at an existing catalog", [lib.source_catalog_key])],
	_health_notes,
))} if {
	input.sourceCatalog == null
} else := {"type": "CatalogSourcesUnhealthy", "status": "True", "reason": "CatalogSourcesUnhealthy", "message": concat("; ", _health_notes)} if {
	"False" in _catalog_health
} else := {"type": "CatalogSourcesUnhealthy", "status": "Unknown", "reason": "MissingCatalogInfo", "message": _unobserved_note} if {
	"Unknown" in _catalog_health
} else := {"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "CatalogSourcesHealthy", "message": sprintf("all %d visible catalog sources are READY", [count(_catalog_health)])}

# _health_notes say which visible catalogs are not READY and which have no connection state yet.
_health_notes := [_unhealthy_note, _unobserved_note] if {
	"False" in _catalog_health
	"Unknown" in _catalog_health
} else := [_unhealthy_note] if {
	"False" in _catalog_health
} else := [_unobserved_note] if {
	"Unknown" in _catalog_health
} else := []

_unhealthy_note := sprintf("%d of %d visible catalog sources are not READY: %s", [
	count(_unhealthy), count(_catalog_health),
	concat(", ", _unhealthy),
])

_unobserved_note := sprintf("the health of %d of %d visible catalog sources is not yet known (no status.connectionState): %s", [
	count(_unobserved), count(_catalog_health),
	concat(", ", _unobserved),
])

# CatalogSourceInvalid is about the Subscription's own source catalog only. A source catalog that
# does not exist has no spec to check: CatalogSourcesUnhealthy reports it (CatalogSourceNotFound),
# and this condition is Unknown.
catalog_source_invalid := {"type": "CatalogSourceInvalid", "status": "Unknown", "reason": "CatalogSourceNotFound", "message": sprintf("the source catalog %s (spec.sourceNamespace/spec.source) does not exist, so whether it is valid is unknown (CatalogSourcesUnhealthy reports it missing)", [lib.source_catalog_key])} if {
	input.sourceCatalog == null
} else := {"type": "CatalogSourceInvalid", "status": "True", "reason": "CatalogSourceNotVisible", "message": concat("", [
	sprintf("the source catalog %s is neither in the Subscription's namespace %s nor in the global catalog namespace %s, so OLM does not resolve from it: move the catalog or fix spec.sourceNamespace", [
		lib.source_catalog_key, lib.subscription_namespace,
		lib.global_catalog_namespace,
	]),
	_also_invalid,
])} if {
	lib.source_namespace != lib.subscription_namespace
	lib.source_namespace != lib.global_catalog_namespace
} else := {"type": "CatalogSourceInvalid", "status": "True", "reason": "CatalogSourceSpecInvalid", "message": sprintf("the source catalog %s is invalid: %s", [lib.source_catalog_key, _violations_text(catalogsource.source_violations)])} if {
	count(catalogsource.source_violations) > 0
} else := {"type": "CatalogSourceInvalid", "status": "False", "reason": "CatalogSourceValid", "message": sprintf("the source catalog %s exists and names exactly one source", [lib.source_catalog_key])}

# _also_invalid adds the spec violations of a source catalog that is also not visible: both deny
# CatalogSourceInvalid, and the condition names both.
_also_invalid := sprintf("; its spec is invalid too: %s", [_violations_text(catalogsource.source_violations)]) if {
	count(catalogsource.source_violations) > 0
} else := ""

_violations_text(found) := concat("; ", [sprintf("%s %s", [v.field, v.message]) | some v in sort(found)])

# ----------------------------------------------------------------------------------------------
# PackageChannelInvalid, from the PackageManifest when it is known.

default _channels := []

_channels := input.packageManifest.status.channels

# _manifest_channels name the package's channels, for the messages that list them.
_manifest_channels := {c.name | some c in _channels}

# _channel_served holds when the package has a channel named channel.
_channel_served if _channels[_].name == channel

# channel is the channel the Subscription follows: spec.channel when it is a non-empty string,
# else the package's default channel ("" when it has none).
default channel := ""

channel := c if {
	c := input.subscription.spec.channel
	is_string(c)
	c != ""
} else := input.packageManifest.status.defaultChannel

package_channel_invalid := {"type": "PackageChannelInvalid", "status": "Unknown", "reason": "PackageManifestUnknown", "message": sprintf("the PackageManifest of package %s in catalog %s is not known, so channel %q cannot be checked", [_package, lib.source_catalog_key, channel])} if {
	input.packageManifest == null
} else := {"type": "PackageChannelInvalid", "status": "True", "reason": "NoDefaultChannel", "message": sprintf("spec.channel is empty and package %s has no default channel: set spec.channel to one of: %s", [_package, lib.join_names(_manifest_channels)])} if {
	channel == ""
} else := {"type": "PackageChannelInvalid", "status": "True", "reason": "ChannelNotFound", "message": sprintf("channel %q is not in package %s served by catalog %s: set spec.channel to one of: %s", [channel, _package, lib.source_catalog_key, lib.join_names(_manifest_channels)])} if {
	not _channel_served
} else := {"type": "PackageChannelInvalid", "status": "False", "reason": "PackageChannelValid", "message": sprintf("channel %q of package %s is served by catalog %s", [channel, _package, lib.source_catalog_key])}

# channel_head is the newest CSV of the followed channel per the PackageManifest ("" unknown).
channel_head := [c.currentCSV | some c in _channels; c.name == channel][0]

default channel_head := ""

# ----------------------------------------------------------------------------------------------
# InstallPlans.

# _plan_name is "namespace/name" of the referenced InstallPlan, for the messages about it (a
# null plan reads as defaults).
_plan_name := lib.namespaced_name(input.installPlan)

# _plan_phase_text is the plan's phase for messages, "None" when it has none.
_plan_phase_text := _plan_phase if {
	is_string(_plan_phase)
	_plan_phase != ""
} else := "None"

_plan_key := sprintf("%s/%s", [
	lib.or_else(object.get(_plan_ref, "namespace", ""), lib.subscription_namespace),
	object.get(_plan_ref, "name", ""),
]) if is_object(_plan_ref)

_plan_failure_reason := lib.or_else(
	object.get(lib.condition(lib.conditions(input.installPlan), "Installed"), "reason", ""),
	"InstallPlanFailed",
)

default _plan_failure_reason := "InstallPlanFailed"

_plan_failure_message := lib.or_else(
	lib.get(input.installPlan, ["status", "message"], ""),
	object.get(lib.condition(lib.conditions(input.installPlan), "Installed"), "message", ""),
)

default _plan_failure_message := ""

# The two InstallPlan conditions look at the plan first: it exists in the common case, which
# settles both without looking at the reference.
install_plan_failed := {"type": "InstallPlanFailed", "status": "True", "reason": _plan_failure_reason, "message": trim_suffix(sprintf("InstallPlan %s failed: %s", [_plan_name, _plan_failure_message]), ": ")} if {
	_plan_phase == "Failed"
} else := {"type": "InstallPlanFailed", "status": "False", "reason": "InstallPlanNotFailed", "message": sprintf("InstallPlan %s is in phase %s", [_plan_name, _plan_phase_text])} if {
	input.installPlan != null
} else := {"type": "InstallPlanFailed", "status": "Unknown", "reason": "InstallPlanNotFound", "message": sprintf("the referenced InstallPlan %s does not exist, so whether it failed is unknown", [_plan_key])} if {
	_plan_ref != null
} else := {"type": "InstallPlanFailed", "status": "False", "reason": "NoInstallPlan", "message": "the Subscription references no InstallPlan"}

install_plan_missing := {"type": "InstallPlanMissing", "status": "False", "reason": "InstallPlanFound", "message": sprintf("InstallPlan %s exists", [_plan_name])} if {
	input.installPlan != null
} else := {"type": "InstallPlanMissing", "status": "True", "reason": "ReferencedInstallPlanNotFound", "message": sprintf("the Subscription references InstallPlan %s, which does not exist: OLM cannot install %s until it generates a new plan", [_plan_key, lib.or_else(lib.current_csv_name, "the current CSV")])} if {
	_plan_ref != null
} else := {"type": "InstallPlanMissing", "status": "False", "reason": "NoInstallPlanReferenced", "message": "the Subscription references no InstallPlan"}

# The plans that concern this Subscription: the referenced one and the pending ones, one per
# namespace/name (the first copy), sorted by namespace/name. Usually that is the referenced plan
# alone, also listed as the one pending plan, or a single plan: nothing to sort or deduplicate.
_plans := [input.installPlan] if {
	_pending_plans == [input.installPlan]
} else := _all_plans if {
	count(_all_plans) < 2
} else := [_all_plans[e[1]] |
	some j, e in sorted
	not sorted[j - 1][0] == e[0]
] if {
	sorted := sort([[lib.namespaced_name(q), i] | some i, q in _all_plans])
}

_all_plans := array.concat([p | p := input.installPlan; p != null], _pending_plans)

# awaiting_plans are the plans that wait for someone (Tollgate) to approve them: Manual, not
# approved (spec.approved false or absent), in phase RequiresApproval.
awaiting_plans := [p |
	some p in _plans
	p.spec.approval == "Manual"
	object.get(p.spec, "approved", false) == false
	p.status.phase == "RequiresApproval"
]

# _awaiting_text names the awaiting plans and their CSVs: "namespace/name (csv, ...)" each.
_awaiting_text := concat(", ", [sprintf("%s (%s)", [
	lib.namespaced_name(p),
	concat(", ", object.get(p, ["spec", "clusterServiceVersionNames"], [])),
]) |
	some p in awaiting_plans
])

default _approval := "Automatic"

_approval := input.subscription.spec.installPlanApproval

# automatic holds when OLM approves plans itself, so Tollgate cannot hold an upgrade.
automatic if _approval != "Manual"

install_plan_awaiting_manual_approval := {"type": "InstallPlanAwaitingManualApproval", "status": "True", "reason": "RequiresApproval", "message": sprintf("awaiting manual approval: InstallPlan %s", [_awaiting_text])} if {
	awaiting_plans != []
} else := {"type": "InstallPlanAwaitingManualApproval", "status": "False", "reason": "AutomaticApproval", "message": "spec.installPlanApproval is Automatic, so OLM approves plans itself and Tollgate cannot hold an upgrade: set spec.installPlanApproval to Manual (or run the manager with --take-over-approval)"} if {
	automatic
} else := {"type": "InstallPlanAwaitingManualApproval", "status": "False", "reason": "NoApprovalPending", "message": "no InstallPlan of this Subscription awaits approval"}

# ----------------------------------------------------------------------------------------------
# The installed CSV.

# replacement is the CSV known to replace the installed one: currentCSV when it differs, else
# the channel head when the PackageManifest knows a different one; undefined when none is known.
replacement := lib.current_csv_name if {
	lib.installed_csv_name != ""
	lib.current_csv_name != ""
	lib.current_csv_name != lib.installed_csv_name
} else := channel_head if {
	lib.installed_csv_name != ""
	channel_head != ""
	channel_head != lib.installed_csv_name
}

_not_installed := sprintf("no CSV of package %s is installed yet", [_package])

installed_csv_replacement_available := {"type": "InstalledCSVReplacementAvailable", "status": "False", "reason": "NotInstalled", "message": _not_installed} if {
	lib.installed_csv_name == ""
} else := {"type": "InstalledCSVReplacementAvailable", "status": "True", "reason": "ReplacementAvailable", "message": sprintf("%s replaces the installed %s", [replacement, lib.installed_csv_name])} if {
	replacement
} else := {"type": "InstalledCSVReplacementAvailable", "status": "False", "reason": "NoReplacementAvailable", "message": sprintf("%s is the latest CSV known in channel %q", [lib.installed_csv_name, channel])}

installed_csv_missing := {"type": "InstalledCSVMissing", "status": "False", "reason": "NotInstalled", "message": _not_installed} if {
	lib.installed_csv_name == ""
} else := {"type": "InstalledCSVMissing", "status": "True", "reason": "InstalledCSVNotFound", "message": sprintf("the Subscription reports %s as installed, but no such ClusterServiceVersion exists in namespace %s", [lib.installed_csv_name, lib.subscription_namespace])} if {
	input.installedCSV == null
} else := {"type": "InstalledCSVMissing", "status": "False", "reason": "InstalledCSVFound", "message": sprintf("ClusterServiceVersion %s exists", [lib.installed_csv_name])}

installed_csv_failed := {"type": "InstalledCSVFailed", "status": "False", "reason": "NotInstalled", "message": _not_installed} if {
	lib.installed_csv_name == ""
} else := {"type": "InstalledCSVFailed", "status": "Unknown", "reason": "InstalledCSVNotFound", "message": sprintf("ClusterServiceVersion %s does not exist, so whether it failed is unknown", [lib.installed_csv_name])} if {
	input.installedCSV == null
} else := {"type": "InstalledCSVFailed", "status": "True", "reason": lib.or_else(lib.get(input.installedCSV, ["status", "reason"], ""), "CSVFailed"), "message": trim_suffix(sprintf("%s failed: %s", [lib.installed_csv_name, lib.get(input.installedCSV, ["status", "message"], "")]), ": ")} if {
	lib.csv_phase == "Failed"
} else := {"type": "InstalledCSVFailed", "status": "False", "reason": "InstalledCSVNotFailed", "message": sprintf("%s is in phase %s", [lib.installed_csv_name, _csv_phase_text])}

# _csv_phase_text is the installed CSV's phase for messages, "None" when it has none.
_csv_phase_text := lib.csv_phase if {
	is_string(lib.csv_phase)
	lib.csv_phase != ""
} else := "None"

# ----------------------------------------------------------------------------------------------
# state and upToDate.

_plan_pending if count(object.get(input, "pendingInstallPlans", [])) > 0

_plan_pending if {
	not _plan_phase in {"Complete", "Failed"}
	lib.current_csv_name in lib.get(input.installPlan, ["spec", "clusterServiceVersionNames"], [])
	lib.current_csv_name != lib.installed_csv_name
}

_current_and_installed if {
	lib.installed_csv_name != ""
	lib.installed_csv_name == lib.current_csv_name
}

# upToDate: installedCSV == currentCSV, Succeeded, and no replacement known.
default up_to_date := false

up_to_date if {
	_current_and_installed
	lib.csv_phase == "Succeeded"
	not replacement
}

# state: UpgradePending (a plan exists, or the current CSV is still coming up), UpgradeFailed
# (the plan or the installed CSV failed), UpgradeAvailable (a replacement, or a first install,
# without a plan yet), AtLatestKnown (current and Succeeded), None (nothing known yet).
state := "UpgradePending" if {
	_plan_pending
} else := "UpgradeFailed" if {
	_plan_phase == "Failed"
	lib.current_csv_name != lib.installed_csv_name
} else := "UpgradeFailed" if {
	lib.installed_csv_name != ""
	lib.csv_phase == "Failed"
} else := "UpgradeAvailable" if {
	replacement
} else := "UpgradeAvailable" if {
	lib.installed_csv_name == ""
	lib.current_csv_name != ""
} else := "AtLatestKnown" if {
	up_to_date
} else := "UpgradePending" if {
	_current_and_installed
	input.installedCSV != null
} else := "None"
