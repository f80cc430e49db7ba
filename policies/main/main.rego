# METADATA
# description: |
#   The entry point the engine queries, data.tollgate.main.result. It assembles the Subscription
#   view, the operands' health, the catalogs' validity and the decision. Denials come from every
#   package data.tollgate.<name> and data.tollgate.packs.<name> that defines `deny`, so policy
#   packs add denials without editing this file; UpgradeGate overrides and
#   data.tollgate.config.disabledCodes are applied here, and each denial's facts and remedies
#   are checked and completed here (the override remedy, the waiver fact). recheckAt, the
#   earliest instant after input.now at which time alone could change the result, is the
#   minimum of every package's `recheck_at` set, collected the same way.
package tollgate.main

import data.tollgate.catalogsource
import data.tollgate.extension
import data.tollgate.health
import data.tollgate.lib
import data.tollgate.subscription

# The input document versions these policies understand: the Subscription document, and the
# extension document (an OLM v1 ClusterExtension and one candidate successor bundle).
input_version := "tollgate.dev/input/v1"

extension_input_version := "tollgate.dev/extension/v1"

_extension_document if input.apiVersion == extension_input_version

# result is undefined for a document without one of the keys version 1 requires (which never
# omits a key: a missing object is null, a missing list []), and the engine turns that into a
# PolicyError: the packages read fields with defaults, and a default must not stand in for a
# whole missing object. (apiVersion and now are checked where they are used; the keys added
# since, which documents of older managers lack, are read with a default. Go's
# policies.InputV1 marks the required ones, and its test holds _input_keys to it.)
result := {
	"conditions": array.concat(subscription.conditions, [upgrade_blocked]),
	"health": health.conditions,
	"state": subscription.state,
	"upToDate": subscription.up_to_date,
	"catalogStatus": subscription.catalog_status,
	"catalogValidation": catalogsource.validation,
	"decision": decision,
	"recheckAt": recheck_at_text,
} if {
	is_object(input)
	not _extension_document
	count(_input_keys - object.keys(input)) == 0
}

_input_keys := {
	"subscription", "installedCSV", "currentCSV", "installPlan", "pendingInstallPlans",
	"installPlanPeers", "catalogSources", "sourceCatalog", "operatorCondition", "operatorGroup",
	"packageManifest", "operands", "gate", "config",
}

# result of an extension document: the extension's conditions and UpgradeBlocked, the operands'
# health, the extension's state; no CatalogSources. Undefined without one of the keys the
# extension document requires (_extension_keys, Go's policies.ExtensionV1), as above.
result := {
	"conditions": array.concat(extension.conditions, [_extension_upgrade_blocked]),
	"health": health.conditions,
	"state": extension.state,
	"upToDate": extension.up_to_date,
	"catalogStatus": [],
	"catalogValidation": [],
	"decision": decision,
	"recheckAt": recheck_at_text,
} if {
	_extension_document
	count(_extension_keys - object.keys(input)) == 0
}

_extension_keys := {
	"extension", "catalogs", "catalogErrors", "installed", "candidate", "operands", "gate",
	"config",
}

decision := {"allowed": allowed, "denials": denials}

# allowed is true only when the decision was computed and no denial stands.
default allowed := false

allowed if count(standing) == 0

# ----------------------------------------------------------------------------------------------
# Collecting denials. The refs below name `deny` at fixed depths, data.tollgate.<name>.deny and
# data.tollgate.packs.<name>.deny, so only those rules are evaluated (walking data.tollgate would
# evaluate this package too, a recursion). Each denial keeps the package it came from. A `deny`
# anywhere else is refused when the policies load (the engine checks every module's rules), so
# no deny rule is silently ignored. Every package judges both document kinds, through the move
# they share (input.move); the embedded packages that judge only one kind check the document's
# kind (tollgate.upgrade judges a Subscription, tollgate.extension a ClusterExtension), so an
# admin's package judges OLM v1's pins as it judges OLM v0's plans.

_collected contains _entry(sprintf("tollgate.%s", [name]), d) if {
	some name
	some d in data.tollgate[name].deny
}

_collected contains _entry(sprintf("tollgate.packs.%s", [name]), d) if {
	some name
	some d in data.tollgate.packs[name].deny
}

# A deny that is not a collection (a string, a number, a boolean) has no elements to iterate:
# it would never deny, silently. It is a PolicyError instead.
_collected contains _not_a_set(sprintf("tollgate.%s", [name]), ds) if {
	some name
	ds := data.tollgate[name].deny
	not _collection(ds)
}

_collected contains _not_a_set(sprintf("tollgate.packs.%s", [name]), ds) if {
	some name
	ds := data.tollgate.packs[name].deny
	not _collection(ds)
}

_collection(x) if is_set(x)

_collection(x) if is_array(x)

_collection(x) if is_object(x)

_not_a_set(pkg, ds) := {
	"code": "PolicyError",
	"message": sprintf("package %s defines deny as %s, which is not a set of denials, so it could never deny", [pkg, json.marshal(ds)]),
	"package": pkg,
	"facts": [
		sprintf("package %s defines deny as %s; tollgate.main collects deny as a set of denials", [pkg, json.marshal(ds)]),
		_fail_closed,
	],
	"lift": [{
		"text": sprintf("make deny in package %s (in a policy ConfigMap or bundle) a set of denials, `deny contains denial if { ... }` (PolicyError cannot be overridden):", [pkg]),
		"command": _policy_configmaps,
	}],
}

# METADATA
# title: The input document has a version these policies do not understand
# custom:
#   code: PolicyError
_collected contains entry if {
	not object.get(input, "apiVersion", "") in {input_version, extension_input_version}
	entry := object.union(
		lib.explained(
			rego.metadata.rule(),
			sprintf(
				"the input document has apiVersion %q, but these policies understand %q: upgrade Tollgate's policies or its manager so they match",
				[object.get(input, "apiVersion", ""), input_version],
			),
			[
				sprintf("the input document has apiVersion %q; these policies understand %q", [object.get(input, "apiVersion", ""), input_version]),
				_fail_closed,
			],
			[{
				"text": "run the policies and the manager of the same Tollgate release (PolicyError cannot be overridden): upgrade the older one, or remove a policy ConfigMap that replaces an embedded policy file with an older copy:",
				"command": _policy_configmaps,
			}],
		),
		{"package": "tollgate.main"},
	)
}

_fail_closed := "the policies could not decide, so nothing is approved (fail closed)"

_policy_configmaps := "kubectl get configmaps -A -l tollgate.dev/policy -o yaml"

# _entry keeps a well-formed denial's code, message, its rule's title (when it is a string), its
# facts and its remedies (see _facts and _lift). Anything else is a PolicyError.
_entry(pkg, d) := object.union(_named(pkg, d), {"facts": _facts(d), "lift": _lift(d)}) if {
	is_string(d.code)
	d.code != ""
	is_string(d.message)
} else := {
	"code": "PolicyError",
	"message": sprintf("package %s produced a denial without a string code and message, so it cannot be trusted: %v", [pkg, d]),
	"package": pkg,
	"facts": [
		sprintf("package %s produced %v, which is not a denial: a denial is an object with a non-empty string code and a string message", [pkg, d]),
		_fail_closed,
	],
	"lift": [{
		"text": sprintf("fix the deny rules of package %s (in a policy ConfigMap or bundle) so that each denial is an object with a non-empty string code and a string message, as lib.denial and lib.explained build them (PolicyError cannot be overridden):", [pkg]),
		"command": _policy_configmaps,
	}],
}

_named(pkg, d) := {"code": d.code, "message": d.message, "package": pkg, "title": d.title} if {
	is_string(d.title)
} else := {"code": d.code, "message": d.message, "package": pkg}

# _facts are the denial's facts when they are a list of strings, else [] (an admin's or a pack's
# rule may give none, or something malformed: it is dropped, never trusted).
_facts(d) := d.facts if {
	is_array(d.facts)
	every f in d.facts {
		is_string(f)
	}
} else := []

# _lift are the denial's remedies when they are a list of well-formed remedies (see _remedy).
# A remedy that offers an override is left out: this package offers the override itself, last,
# and only where it lifts the hold. A denial left without remedies (none given, or malformed)
# gets the default one.
_lift(d) := lift if {
	is_array(d.lift)
	every r in d.lift {
		_remedy(r)
	}
	lift := [r | some r in d.lift; not r.override] # each override is a string (_remedy)
	count(lift) > 0
} else := [{"text": "the condition this rule checks must stop holding (see the rule and its policy pack's configuration)"}]

# _remedy holds for {"text": non-empty string, "command"?: string, "override"?: string,
# "subscription"?: {"namespace": s, "name": s}} and nothing else, where namespace and name are
# plain Kubernetes names (Go turns them into a command).
_remedy(r) if {
	is_object(r)
	count(object.keys(r) - {"text", "command", "override", "subscription"}) == 0
	is_string(r.text)
	r.text != ""

	# an absent key reads as "", a string: optional
	is_string(object.get(r, "command", ""))
	is_string(object.get(r, "override", ""))
	_optional_subscription(r)
}

_optional_subscription(r) if not "subscription" in object.keys(r)

_optional_subscription(r) if {
	s := r.subscription
	is_object(s)
	object.keys(s) == {"namespace", "name"}
	lib.plain_name(s.namespace)
	lib.plain_name(s.name)
}

# ----------------------------------------------------------------------------------------------
# Disabled codes and overrides. PolicyError is never disabled. PolicyError,
# InstallPlanIncludesBlockedOperator and TooManyOperatorGroups are never overridden: the first
# means a policy could not be trusted, and the decision fails closed; a waiver of the second
# cannot lift the hold, since the plan installs the other operator too and is held as long as
# that operator's own decision holds it (the way out is that Subscription's remedies); beside a
# second OperatorGroup OLM itself refuses to act, and an approval would wait for the group to go
# and install unchecked then. Of an extension document's codes, CatalogUnreadable,
# CatalogNotServing and ExtensionNotInstalled are never overridden: the first two mean the
# successors were not decided on the content of every catalog the extension selects (a decision
# not on the facts the policies saw; OLM v1 itself does not resolve while a selected catalog is
# not served), and Tollgate moves the pin of installed extensions only.

_disabled := {c | some c in data.tollgate.config.disabledCodes} - {"PolicyError"}

_not_overridable := {
	"PolicyError", "InstallPlanIncludesBlockedOperator", "TooManyOperatorGroups",
	"CatalogUnreadable", "CatalogNotServing", "ExtensionNotInstalled",
}

# _waiver_not_offered are the codes whose UpgradeGate waiver is not offered as a remedy, because
# it would not lift the hold: OLM applies its own Upgradeable rule after an InstallPlan is
# approved, and the replacing CSV stays Pending while the installed operator's OperatorCondition
# says Upgradeable=False or is stale, unless the OperatorCondition's own spec.overrides sets
# Upgradeable=True. Their denials offer that override instead (tollgate.upgrade). A waiver
# already in the gate still marks them overridden.
_waiver_not_offered := {"OperatorNotUpgradeable", "OperatorConditionStale"}

default _overrides := []

_overrides := input.gate.spec.overrides

# _override(code) is the gate's first override of code. The overrides are indexed by code once
# per evaluation: every denial looks its code up, some of them several times.
_override(code) := _override_of[code]

_override_of := {code: [o | some o in overrides; o.code == code][0] |
	some code in {o.code | some o in overrides}
} if {
	overrides := _overrides
}

_now := time.parse_rfc3339_ns(input.now)

# An override is active without an expiry, or until it expires (an unparseable time expires it).
_active(o) if not o.expires

_active(o) if lib.time_ns(o.expires) > _now

_final contains _decided(e) if {
	some e in _collected
	not e.code in _disabled
}

# _decided applies the UpgradeGate's override of e's code. A waived denial keeps its facts, says
# who waived it, and has nothing left to lift. A standing denial that can be overridden offers
# the override as its last remedy; one that cannot says that its override, if any, is ignored.
_decided(e) := object.union(e, {
	"overridden": true,
	"overrideReason": o.reason,
	"facts": array.concat(e.facts, [sprintf("waived by the %s override: %v%s", [_gate_kind, o.reason, _expiry(o)])]),
	"lift": [],
}) if {
	not e.code in _not_overridable
	o := _override(e.code)
	_active(o)
} else := object.union(e, {
	"overridden": false,
	"message": sprintf("%s (override expired at %s: %s)", [e.message, o.expires, o.reason]),
	"lift": array.concat(e.lift, _waivers(e.code)),
}) if {
	not e.code in _not_overridable
	o := _override(e.code)
} else := object.union(e, {"overridden": false, "lift": array.concat(e.lift, _waivers(e.code))}) if {
	not e.code in _not_overridable
} else := object.union(e, {
	"overridden": false,
	"facts": array.concat(e.facts, [sprintf("the %s override of %s is ignored: %s cannot be overridden", [_gate_kind, e.code, e.code])]),
}) if {
	_override(e.code)
} else := object.union(e, {"overridden": false})

_expiry(o) := sprintf(" (expires %v)", [o.expires]) if o.expires

else := ""

# _waivers is the UpgradeGate waiver of code as a remedy, where it would lift the hold.
_waivers(code) := [] if {
	code in _waiver_not_offered
} else := [_waiver(code)]

_waiver(code) := {
	"text": sprintf("or an admin waives it for this %s, with a reason (add \"expires\" to make it temporary):", [_subject_kind]),
	"override": code,
}

# _gate_kind and _subject_kind name the gate whose overrides apply and the object the document
# is about, in the words of the denials.
_gate_kind := "ExtensionGate" if {
	_extension_document
} else := "UpgradeGate"

_subject_kind := "ClusterExtension" if {
	_extension_document
} else := "Subscription"

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
	not allowed
} else := {
	"type": "UpgradeBlocked", "status": "True", "reason": standing[0].code,
	"message": sprintf("%d denials stand (%s); first: %s", [count(standing), _codes, standing[0].message]),
} if {
	count(standing) > 0
} else := {
	"type": "UpgradeBlocked", "status": "True", "reason": "PolicyDenied",
	"message": "the policies did not allow the upgrade, and no denial says why: check the admin policies that set decision.allowed",
} if {
	not allowed
} else := {
	"type": "UpgradeBlocked", "status": "False", "reason": "UpgradeAllowed",
	"message": sprintf("no denial stands; mode %s: %s", [_mode, _mode_effect]),
}

_mode_effect := "Tollgate reports the decision but never approves" if {
	_mode == "Audit"
} else := "Tollgate approves the waiting InstallPlan"

# UpgradeBlocked of an extension document: an upgrade waits when the document has a candidate
# successor. A document without one allows nothing to happen: Go never moves a pin for it,
# whatever its decision says. OLM v1 has no approval of its own, so there is no
# AutomaticApproval case.
_extension_upgrade_blocked := {
	"type": "UpgradeBlocked", "status": "False", "reason": "NoUpgradeWaiting",
	"message": "no upgrade is waiting: the selected catalogs offer no successor of the installed bundle that the ClusterExtension may move to",
} if {
	object.get(input, "candidate", null) == null
} else := {
	"type": "UpgradeBlocked", "status": "True", "reason": standing[0].code,
	"message": sprintf("%d denials stand (%s); first: %s", [count(standing), _codes, standing[0].message]),
} if {
	count(standing) > 0
} else := {
	"type": "UpgradeBlocked", "status": "True", "reason": "PolicyDenied",
	"message": "the policies did not allow the upgrade, and no denial says why: check the admin policies that set decision.allowed",
} if {
	not allowed
} else := {
	"type": "UpgradeBlocked", "status": "False", "reason": "UpgradeAllowed",
	"message": sprintf("no denial stands; mode %s: %s", [_mode, _extension_mode_effect]),
}

_extension_mode_effect := sprintf("Tollgate reports the decision but never moves spec.source.catalog.version to %v", [input.candidate.version]) if {
	_mode == "Audit"
} else := sprintf("Tollgate moves spec.source.catalog.version to %v", [input.candidate.version])

# ----------------------------------------------------------------------------------------------
# Time. recheckAt is the earliest instant strictly after input.now at which the result could
# change with time alone (an override's expiry, a window's edge, a freeze's start or end, a soak
# time's end), as an RFC 3339 UTC string, or null when nothing in the result depends on time:
# the controller evaluates the gate again then, instead of re-evaluating everything
# periodically. Every package reports its own instants in a set `recheck_at`, collected at the
# same fixed depths as `deny` (data.tollgate.<name>.recheck_at, which includes this package's,
# and data.tollgate.packs.<name>.recheck_at). An element is Unix nanoseconds (a number, as
# time.parse_rfc3339_ns returns) or an RFC 3339 string; anything else, and any instant not after
# input.now, is ignored. Reporting an instant too many only costs one evaluation that changes
# nothing; missing one leaves the result stale until the controller's safety-net resync.

default recheck_at_text := null

recheck_at_text := time.format(min(_rechecks)) if count(_rechecks) > 0

_rechecks contains ns if {
	not _extension_document
	some name
	some t in data.tollgate[name].recheck_at
	ns := _future_ns(t)
}

# An extension document: tollgate.extension's instants (it reports none today) and this
# package's own.
_rechecks contains ns if {
	_extension_document
	some t in data.tollgate.extension.recheck_at
	ns := _future_ns(t)
}

_rechecks contains ns if {
	_extension_document
	some t in recheck_at
	ns := _future_ns(t)
}

_rechecks contains ns if {
	some name
	some t in data.tollgate.packs[name].recheck_at
	ns := _future_ns(t)
}

# _future_ns is an instant in Unix nanoseconds after input.now and before 2262 (what
# time.format can write), or undefined: a garbled element never raises a built-in error.
_future_ns(t) := ns if {
	is_number(t)
	ns := ceil(t)
	_future(ns)
} else := ns if {
	lib.rfc3339(t)
	ns := lib.time_ns(t)
	_future(ns)
}

_future(ns) if {
	ns > _now
	ns < 9223372036000000000
}

# This package's own instants: the expiry of each override that waives a denial now (an
# override that waives nothing changes nothing when it expires, and an expired one is already
# in the result).
recheck_at contains lib.time_ns(o.expires) if {
	some d in denials
	d.overridden
	o := _override(d.code)
	o.expires
}
