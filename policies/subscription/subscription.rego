# METADATA
# description: |
#   Tollgate's view of a Subscription (subscription-status.md): the ten abnormal-true condition
#   types, always present with status True, False or Unknown; state; upToDate; catalogStatus.
#   With the corrections DESIGN.md records: ResolutionFailed mirrors OLM's own condition;
#   AtLatestKnown and upToDate need the installed CSV to be current *and* Succeeded.
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

# Facts read once: each field directly, with the default lib.get would give.
_sub_namespace := lib.subscription_namespace

default _package := ""

_package := input.subscription.spec.name

_installed := lib.installed_csv_name

_current := lib.current_csv_name

_plan := input.installPlan

default _plan_ref := null

_plan_ref := input.subscription.status.installPlanRef

default _plan_phase := ""

_plan_phase := input.installPlan.status.phase

_phase(obj) := lib.get(obj, ["status", "phase"], "")

# ----------------------------------------------------------------------------------------------
# ResolutionFailed: Tollgate does not resolve; it mirrors OLM's own condition, False when none.
# Beside several OperatorGroups, where OLM's resolver fails ("expected 1 OperatorGroup"),
# Tollgate reports it before OLM does.
resolution_failed := {"type": "ResolutionFailed", "status": c.status, "reason": lib.or_else(object.get(c, "reason", ""), "ResolutionFailed"), "message": lib.or_else(object.get(c, "message", ""), "OLM reports that resolution failed")} if {
	c := [x | some x in input.subscription.status.conditions; x.type == "ResolutionFailed"][0]
} else := {"type": "ResolutionFailed", "status": "True", "reason": "TooManyOperatorGroups", "message": sprintf("namespace %s holds %d OperatorGroups; OLM resolves only in a namespace with exactly one", [_sub_namespace, n])} if {
	n := count(object.get(input, "operatorGroups", []))
	n > 1
} else := {"type": "ResolutionFailed", "status": "False", "reason": "NoFailureReported", "message": "OLM reports no resolution failure for this Subscription"}

# ----------------------------------------------------------------------------------------------
# Catalogs. Healthy means status.connectionState.lastObservedState == "READY"; without a
# connection state the health is Unknown.

# The health a lastObservedState means: READY is True, none ("") Unknown, anything else False.
_health_of := {"READY": "True", "": "Unknown"}

# _catalog_health is the health of each of lib.catalogs, in the same order.
_catalog_health := [object.get(health_of, [e.state], "False") | some e in lib.catalog_entries] if {
	health_of := _health_of
}

# catalogStatus is one entry per catalog visible to the Subscription (and its source catalog).
catalog_status := [{
	"namespace": e.namespace,
	"name": e.name,
	"healthy": health[i],
	"lastObservedState": e.state,
	"source": e.key == source_key,
	"valid": count(violations[i]) == 0,
} |
	some i, e in lib.catalog_entries
] if {
	health := _catalog_health
	source_key := lib.source_catalog_key
	violations := catalogsource.catalog_violations
}

_unhealthy := [sprintf("%s (%s)", [e.key, e.state]) |
	some i, e in lib.catalog_entries
	health[i] == "False"
] if {
	health := _catalog_health
}

_unobserved := [e.key |
	some i, e in lib.catalog_entries
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
	count(_unhealthy) > 0
} else := {"type": "CatalogSourcesUnhealthy", "status": "Unknown", "reason": "MissingCatalogInfo", "message": _unobserved_note} if {
	count(_unobserved) > 0
} else := {"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "CatalogSourcesHealthy", "message": sprintf("all %d visible catalog sources are READY", [count(lib.catalogs)])}

# _health_notes say which visible catalogs are not READY and which have no connection state yet.
_health_notes := array.concat(
	[sprintf("%d of %d visible catalog sources are not READY: %s", [count(_unhealthy), count(lib.catalogs), concat(", ", _unhealthy)]) | count(_unhealthy) > 0],
	[_unobserved_note | count(_unobserved) > 0],
)

_unobserved_note := sprintf("the health of %d of %d visible catalog sources is not yet known (no status.connectionState): %s", [
	count(_unobserved), count(lib.catalogs),
	concat(", ", _unobserved),
])

_source_namespace := lib.source_namespace

# CatalogSourceInvalid is about the Subscription's own source catalog only. A source catalog that
# does not exist has no spec to check: CatalogSourcesUnhealthy reports it (CatalogSourceNotFound),
# and this condition is Unknown.
catalog_source_invalid := {"type": "CatalogSourceInvalid", "status": "Unknown", "reason": "CatalogSourceNotFound", "message": sprintf("the source catalog %s (spec.sourceNamespace/spec.source) does not exist, so whether it is valid is unknown (CatalogSourcesUnhealthy reports it missing)", [lib.source_catalog_key])} if {
	input.sourceCatalog == null
} else := {"type": "CatalogSourceInvalid", "status": "True", "reason": "CatalogSourceNotVisible", "message": concat("", [
	sprintf("the source catalog %s is neither in the Subscription's namespace %s nor in the global catalog namespace %s, so OLM does not resolve from it: move the catalog or fix spec.sourceNamespace", [
		lib.source_catalog_key, _sub_namespace,
		lib.global_catalog_namespace,
	]),
	_also_invalid,
])} if {
	not _source_namespace in {_sub_namespace, lib.global_catalog_namespace}
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

_manifest := input.packageManifest

default _channels := []

_channels := input.packageManifest.status.channels

_manifest_channels := {c.name | some c in _channels}

default _default_channel := ""

_default_channel := input.packageManifest.status.defaultChannel

default _spec_channel := ""

_spec_channel := input.subscription.spec.channel

# channel is the channel the Subscription follows: spec.channel, else the package's default.
channel := lib.or_else(_spec_channel, _default_channel)

package_channel_invalid := {"type": "PackageChannelInvalid", "status": "Unknown", "reason": "PackageManifestUnknown", "message": sprintf("the PackageManifest of package %s in catalog %s is not known, so channel %q cannot be checked", [_package, lib.source_catalog_key, channel])} if {
	_manifest == null
} else := {"type": "PackageChannelInvalid", "status": "True", "reason": "NoDefaultChannel", "message": sprintf("spec.channel is empty and package %s has no default channel: set spec.channel to one of: %s", [_package, lib.join_names(_manifest_channels)])} if {
	channel == ""
} else := {"type": "PackageChannelInvalid", "status": "True", "reason": "ChannelNotFound", "message": sprintf("channel %q is not in package %s served by catalog %s: set spec.channel to one of: %s", [channel, _package, lib.source_catalog_key, lib.join_names(_manifest_channels)])} if {
	not channel in _manifest_channels
} else := {"type": "PackageChannelInvalid", "status": "False", "reason": "PackageChannelValid", "message": sprintf("channel %q of package %s is served by catalog %s", [channel, _package, lib.source_catalog_key])}

# channel_head is the newest CSV of the followed channel per the PackageManifest ("" unknown).
channel_head := [c.currentCSV | some c in _channels; c.name == channel][0]

default channel_head := ""

# ----------------------------------------------------------------------------------------------
# InstallPlans.

_plan_key := sprintf("%s/%s", [
	lib.or_else(object.get(_plan_ref, "namespace", ""), _sub_namespace),
	object.get(_plan_ref, "name", ""),
]) if is_object(_plan_ref)

_plan_failure_reason := lib.or_else(
	object.get(lib.condition(lib.conditions(_plan), "Installed"), "reason", ""),
	"InstallPlanFailed",
)

default _plan_failure_reason := "InstallPlanFailed"

_plan_failure_message := lib.or_else(
	lib.get(_plan, ["status", "message"], ""),
	object.get(lib.condition(lib.conditions(_plan), "Installed"), "message", ""),
)

default _plan_failure_message := ""

install_plan_failed := {"type": "InstallPlanFailed", "status": "True", "reason": _plan_failure_reason, "message": trim_suffix(sprintf("InstallPlan %s failed: %s", [lib.namespaced_name(_plan), _plan_failure_message]), ": ")} if {
	_plan_phase == "Failed"
} else := {"type": "InstallPlanFailed", "status": "Unknown", "reason": "InstallPlanNotFound", "message": sprintf("the referenced InstallPlan %s does not exist, so whether it failed is unknown", [_plan_key])} if {
	_plan == null
	_plan_ref != null
} else := {"type": "InstallPlanFailed", "status": "False", "reason": "NoInstallPlan", "message": "the Subscription references no InstallPlan"} if {
	_plan == null
} else := {"type": "InstallPlanFailed", "status": "False", "reason": "InstallPlanNotFailed", "message": sprintf("InstallPlan %s is in phase %s", [lib.namespaced_name(_plan), lib.or_else(_plan_phase, "None")])}

install_plan_missing := {"type": "InstallPlanMissing", "status": "True", "reason": "ReferencedInstallPlanNotFound", "message": sprintf("the Subscription references InstallPlan %s, which does not exist: OLM cannot install %s until it generates a new plan", [_plan_key, lib.or_else(_current, "the current CSV")])} if {
	_plan == null
	_plan_ref != null
} else := {"type": "InstallPlanMissing", "status": "False", "reason": "NoInstallPlanReferenced", "message": "the Subscription references no InstallPlan"} if {
	_plan == null
} else := {"type": "InstallPlanMissing", "status": "False", "reason": "InstallPlanFound", "message": sprintf("InstallPlan %s exists", [lib.namespaced_name(_plan)])}

# The plans that concern this Subscription: the referenced one and the pending ones, one per
# namespace/name (the first copy), sorted by namespace/name.
_plans := [_all_plans[e[1]] |
	some j, e in _plans_sorted
	not _plans_sorted[j - 1][0] == e[0]
]

_plans_sorted := sort([[lib.namespaced_name(q), i] | some i, q in _all_plans])

_all_plans := array.concat([p | p := _plan; p != null], object.get(input, "pendingInstallPlans", []))

awaits_approval(plan) if {
	plan.spec.approval == "Manual"
	not plan.spec.approved
	_phase(plan) == "RequiresApproval"
}

# awaiting_plans are the plans that wait for someone (Tollgate) to approve them.
awaiting_plans := [p | some p in _plans; awaits_approval(p)]

_plan_text(p) := sprintf("%s (%s)", [lib.namespaced_name(p), concat(", ", lib.get(p, ["spec", "clusterServiceVersionNames"], []))])

default _approval := "Automatic"

_approval := input.subscription.spec.installPlanApproval

# automatic holds when OLM approves plans itself, so Tollgate cannot hold an upgrade.
automatic if _approval != "Manual"

install_plan_awaiting_manual_approval := {"type": "InstallPlanAwaitingManualApproval", "status": "True", "reason": "RequiresApproval", "message": sprintf("awaiting manual approval: InstallPlan %s", [concat(", ", [_plan_text(p) | some p in awaiting_plans])])} if {
	count(awaiting_plans) > 0
} else := {"type": "InstallPlanAwaitingManualApproval", "status": "False", "reason": "AutomaticApproval", "message": "spec.installPlanApproval is Automatic, so OLM approves plans itself and Tollgate cannot hold an upgrade: set spec.installPlanApproval to Manual (or run the manager with --take-over-approval)"} if {
	automatic
} else := {"type": "InstallPlanAwaitingManualApproval", "status": "False", "reason": "NoApprovalPending", "message": "no InstallPlan of this Subscription awaits approval"}

# ----------------------------------------------------------------------------------------------
# The installed CSV.

# replacement is the CSV known to replace the installed one: currentCSV when it differs, else
# the channel head when the PackageManifest knows a different one; undefined when none is known.
replacement := _current if {
	_installed != ""
	not _current in {"", _installed}
} else := channel_head if {
	_installed != ""
	not channel_head in {"", _installed}
}

installed_csv_replacement_available := {"type": "InstalledCSVReplacementAvailable", "status": "False", "reason": "NotInstalled", "message": sprintf("no CSV of package %s is installed yet", [_package])} if {
	_installed == ""
} else := {"type": "InstalledCSVReplacementAvailable", "status": "True", "reason": "ReplacementAvailable", "message": sprintf("%s replaces the installed %s", [replacement, _installed])} if {
	replacement
} else := {"type": "InstalledCSVReplacementAvailable", "status": "False", "reason": "NoReplacementAvailable", "message": sprintf("%s is the latest CSV known in channel %q", [_installed, channel])}

installed_csv_missing := {"type": "InstalledCSVMissing", "status": "False", "reason": "NotInstalled", "message": sprintf("no CSV of package %s is installed yet", [_package])} if {
	_installed == ""
} else := {"type": "InstalledCSVMissing", "status": "True", "reason": "InstalledCSVNotFound", "message": sprintf("the Subscription reports %s as installed, but no such ClusterServiceVersion exists in namespace %s", [_installed, _sub_namespace])} if {
	input.installedCSV == null
} else := {"type": "InstalledCSVMissing", "status": "False", "reason": "InstalledCSVFound", "message": sprintf("ClusterServiceVersion %s exists", [_installed])}

installed_csv_failed := {"type": "InstalledCSVFailed", "status": "False", "reason": "NotInstalled", "message": sprintf("no CSV of package %s is installed yet", [_package])} if {
	_installed == ""
} else := {"type": "InstalledCSVFailed", "status": "Unknown", "reason": "InstalledCSVNotFound", "message": sprintf("ClusterServiceVersion %s does not exist, so whether it failed is unknown", [_installed])} if {
	input.installedCSV == null
} else := {"type": "InstalledCSVFailed", "status": "True", "reason": lib.or_else(lib.get(input.installedCSV, ["status", "reason"], ""), "CSVFailed"), "message": trim_suffix(sprintf("%s failed: %s", [_installed, lib.get(input.installedCSV, ["status", "message"], "")]), ": ")} if {
	lib.csv_phase == "Failed"
} else := {"type": "InstalledCSVFailed", "status": "False", "reason": "InstalledCSVNotFailed", "message": sprintf("%s is in phase %s", [_installed, lib.or_else(lib.csv_phase, "None")])}

# ----------------------------------------------------------------------------------------------
# state and upToDate.

_plan_pending if count(object.get(input, "pendingInstallPlans", [])) > 0

_plan_pending if {
	not _plan_phase in {"Complete", "Failed"}
	_current in lib.get(_plan, ["spec", "clusterServiceVersionNames"], [])
	_current != _installed
}

_current_and_installed if {
	_installed != ""
	_installed == _current
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
	_current != _installed
} else := "UpgradeFailed" if {
	_installed != ""
	lib.csv_phase == "Failed"
} else := "UpgradeAvailable" if {
	replacement
} else := "UpgradeAvailable" if {
	_installed == ""
	_current != ""
} else := "AtLatestKnown" if {
	up_to_date
} else := "UpgradePending" if {
	_current_and_installed
	input.installedCSV != null
} else := "None"
