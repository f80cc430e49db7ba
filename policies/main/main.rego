# METADATA
# description: |
#   The entry point the engine queries, data.tollgate.main.result. It assembles the Subscription
#   view, the operands' health, the catalogs' validity and the decision. Denials come from every
#   package data.tollgate.<name> and data.tollgate.packs.<name> that defines `deny`, so policy
#   packs add denials without editing this file; UpgradeGate overrides and
#   data.tollgate.config.disabledCodes are applied here.
package tollgate.main

import data.tollgate.catalogsource
import data.tollgate.health
import data.tollgate.lib
import data.tollgate.subscription

# The input document version these policies understand.
input_version := "tollgate.dev/input/v1"

# result is undefined for a document without one of the keys of version 1 (which never omits a
# key: a missing object is null, a missing list []), and the engine turns that into a
# PolicyError: the packages read fields with defaults, and a default must not stand in for a
# whole missing object. (apiVersion and now are checked where they are used.)
result := {
	"conditions": array.concat(subscription.conditions, [upgrade_blocked]),
	"health": health.conditions,
	"state": subscription.state,
	"upToDate": subscription.up_to_date,
	"catalogStatus": subscription.catalog_status,
	"catalogValidation": catalogsource.validation,
	"decision": decision,
} if {
	is_object(input)
	count(_input_keys - object.keys(input)) == 0
}

_input_keys := {
	"subscription", "installedCSV", "currentCSV", "installPlan", "pendingInstallPlans",
	"installPlanPeers", "catalogSources", "sourceCatalog", "operatorCondition", "operatorGroup",
	"packageManifest", "operands", "gate", "config",
}

decision := {"allowed": allowed, "denials": denials}

# allowed is true only when the decision was computed and no denial stands.
default allowed := false

allowed if count(standing) == 0

# ----------------------------------------------------------------------------------------------
# Collecting denials. The refs below name `deny` at fixed depths, data.tollgate.<name>.deny and
# data.tollgate.packs.<name>.deny, so only those rules are evaluated (walking data.tollgate would
# evaluate this package too, a recursion). Each denial keeps the package it came from.

_collected contains _entry(sprintf("tollgate.%s", [name]), d) if {
	some name
	some d in data.tollgate[name].deny
}

_collected contains _entry(sprintf("tollgate.packs.%s", [name]), d) if {
	some name
	some d in data.tollgate.packs[name].deny
}

# METADATA
# title: The input document has a version these policies do not understand
# custom:
#   code: PolicyError
_collected contains entry if {
	object.get(input, "apiVersion", "") != input_version
	entry := object.union(
		lib.denial(rego.metadata.rule(), sprintf(
			"the input document has apiVersion %q, but these policies understand %q: upgrade Tollgate's policies or its manager so they match",
			[object.get(input, "apiVersion", ""), input_version],
		)),
		{"package": "tollgate.main"},
	)
}

# _entry keeps a well-formed denial's code, message and (when it is a string) its rule's title.
_entry(pkg, d) := {"code": d.code, "message": d.message, "package": pkg, "title": d.title} if {
	is_string(d.code)
	d.code != ""
	is_string(d.message)
	is_string(d.title)
} else := {"code": d.code, "message": d.message, "package": pkg} if {
	is_string(d.code)
	d.code != ""
	is_string(d.message)
} else := {
	"code": "PolicyError",
	"message": sprintf("package %s produced a denial without a string code and message, so it cannot be trusted: %v", [pkg, d]),
	"package": pkg,
}

# ----------------------------------------------------------------------------------------------
# Disabled codes and overrides. PolicyError is never disabled nor overridden: it means a policy
# could not be trusted, and the decision fails closed.

_disabled := {c | some c in data.tollgate.config.disabledCodes} - {"PolicyError"}

default _overrides := []

_overrides := input.gate.spec.overrides

_override(code) := [o | some o in _overrides; o.code == code][0]

_now := time.parse_rfc3339_ns(input.now)

# An override is active without an expiry, or until it expires (an unparseable time expires it).
_active(o) if not o.expires

_active(o) if lib.time_ns(o.expires) > _now

_final contains _overridden(e) if {
	some e in _collected
	not e.code in _disabled
}

_overridden(e) := object.union(e, {"overridden": true, "overrideReason": o.reason}) if {
	e.code != "PolicyError"
	o := _override(e.code)
	_active(o)
} else := object.union(e, {
	"overridden": false,
	"message": sprintf("%s (override expired at %s: %s)", [e.message, o.expires, o.reason]),
}) if {
	e.code != "PolicyError"
	o := _override(e.code)
} else := object.union(e, {"overridden": false})

# denials: standing ones first, then by code, then by message.
denials := [k[3] | some k in sort([[d.overridden, d.code, d.message, d] | some d in _final])]

standing := [d | some d in denials; not d.overridden]

# ----------------------------------------------------------------------------------------------
# UpgradeBlocked: True when an upgrade is waiting and a denial stands.

_waiting if count(subscription.awaiting_plans) > 0

_waiting if subscription.state == "UpgradeAvailable"

default _gate_mode := ""

_gate_mode := input.gate.spec.mode

default _default_mode := "Enforce"

_default_mode := input.config.defaultMode

_mode := lib.or_else(_gate_mode, _default_mode)

_codes := concat(", ", [d.code | some d in standing])

upgrade_blocked := {
	"type": "UpgradeBlocked", "status": "False", "reason": "NoUpgradeWaiting",
	"message": "no upgrade is waiting: no InstallPlan awaits approval and no replacement is known",
} if {
	not _waiting
} else := {
	"type": "UpgradeBlocked", "status": "False", "reason": "AutomaticApproval",
	"message": sprintf(
		"OLM approves this Subscription's plans itself, so Tollgate cannot hold the upgrade (%d denials stand: %s): set spec.installPlanApproval to Manual",
		[count(standing), _codes],
	),
} if {
	subscription.automatic
	count(standing) > 0
} else := {
	"type": "UpgradeBlocked", "status": "True", "reason": standing[0].code,
	"message": sprintf("%d denials stand (%s); first: %s", [count(standing), _codes, standing[0].message]),
} if {
	count(standing) > 0
} else := {
	"type": "UpgradeBlocked", "status": "False", "reason": "UpgradeAllowed",
	"message": sprintf("no denial stands; mode %s: %s", [_mode, _mode_effect]),
}

_mode_effect := "Tollgate reports the decision but never approves" if {
	_mode == "Audit"
} else := "Tollgate approves the waiting InstallPlan"
