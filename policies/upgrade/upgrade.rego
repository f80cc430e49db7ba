# METADATA
# description: |
#   The embedded denials: the installed operator's OperatorCondition (OLM's own Upgradeable
#   rule, applied before approval instead of after it), its operands' health, the Subscription's
#   source catalog, and the other operators an InstallPlan bundles.
package tollgate.upgrade

import data.tollgate.catalogsource
import data.tollgate.health
import data.tollgate.lib

# ----------------------------------------------------------------------------------------------
# OperatorCondition. OLM decides Upgradeable from the OperatorCondition named after the installed
# CSV (none: upgradeable): an override of type Upgradeable in spec.overrides wins both ways (only
# status True allows); otherwise the Upgradeable condition of status.conditions, which OLM copies
# from spec.conditions, blocks when its observedGeneration is behind the object's generation or
# its status is False. Tollgate also treats an Upgradeable in spec.conditions that OLM has not
# yet copied into status as stale. None of this applies on a first install. The installed CSV is
# the one being replaced (lib.checked_csv_name): for a recreated Subscription that reports none,
# the CSV its pending plan replaces, as OLM checks it.

# The CSV being replaced is the move's from end when the document states one (a plan's move
# replaces each CSV up the replacement chain, each with its own OperatorCondition, and OLM
# deletes them all once the new CSV succeeds), else lib.checked_csv_name.
_from := f if {
	f := object.get(input, ["move", "from"], null)
	is_object(f)
}

_installed := _from.name if {
	_from
} else := lib.checked_csv_name

_oc := _from.operatorCondition if {
	_from.operatorCondition != null
} else := input.operatorCondition if {
	not _from
	_installed != ""
	input.operatorCondition != null
}

_oc_name := lib.kind_name(object.union({"kind": "OperatorCondition"}, _oc))

# The OperatorCondition's lists, read once ([] when absent, or when _oc does not apply).
default _overrides := []

_overrides := _oc.spec.overrides

default _status_conditions := []

_status_conditions := _oc.status.conditions

default _spec_conditions := []

_spec_conditions := _oc.spec.conditions

# The conditions the denials read, each looked up once per evaluation: rules, not functions,
# so that an absent one (the common case for an override) is not searched for again by every
# denial that checks it. _reported_upgradeable is status.conditions' Upgradeable when no override
# decides; the Upgradeable denials start from the one they need, so those that do not apply
# stop at their first expression.
_override_upgradeable := lib.condition(_overrides, "Upgradeable")

_override_upgrading := lib.condition(_overrides, "Upgrading")

_reported_upgradeable := c if {
	not _override_upgradeable
	c := lib.condition(_status_conditions, "Upgradeable")
}

default _generation := 0

_generation := _oc.metadata.generation

# _reported_stale holds when _reported_upgradeable was observed at another generation than the
# object's (a rule, so the two denials that ask are answered by one comparison).
_reported_stale if object.get(_reported_upgradeable, "observedGeneration", 0) != _generation

_said(c) := lib.or_else(object.get(c, "message", ""), lib.or_else(object.get(c, "reason", ""), "no message"))

# What the facts and remedies name: the OperatorCondition by name, and as namespace/name (its
# namespace is the Subscription's).
_oc_object_name := lib.name(_oc)

_oc_namespace := lib.or_else(lib.get(_oc, ["metadata", "namespace"], ""), lib.subscription_namespace)

_oc_key := sprintf("%s/%s", [_oc_namespace, _oc_object_name])

_oc_fact(c) := lib.condition_fact(sprintf("OperatorCondition %s", [_oc_object_name]), c)

_override_fact(o) := sprintf("OperatorCondition %s: spec.overrides sets %v=%v (an admin override): %s", [
	_oc_object_name, o.type, object.get(o, "status", ""), lib.said(o),
])

# _override_remedy lifts a hold that an admin's override of type t puts on the upgrade.
_override_remedy(t, status) := lib.remedy(
	sprintf("an admin removes the %s override from spec.overrides of OperatorCondition %s, or sets its status to %s:", [t, _oc_key, status]),
	"kubectl edit operatorcondition -n %s %s",
	[_oc_namespace, _oc_object_name],
)

_copy_remedy := {"text": "OLM copies the operator's spec.conditions to status.conditions; if it does not, check that OLM's olm-operator is running"}

# _olm_override_remedy lifts a hold that OLM applies too. OLM checks Upgradeable itself after an
# InstallPlan is approved: the replacing CSV stays Pending while the installed operator's
# OperatorCondition says Upgradeable=False or is stale, unless its spec.overrides sets
# Upgradeable=True. An UpgradeGate waiver would only make Tollgate approve a plan that OLM then
# holds, so tollgate.main does not offer it for these codes; the OperatorCondition's own
# override lifts both holds (Tollgate reads spec.overrides first, as OLM does).
_olm_override_remedy := lib.remedy(
	sprintf("or an admin overrides Upgradeable for OLM and Tollgate alike in spec.overrides of OperatorCondition %s (an UpgradeGate waiver would not do: OLM checks Upgradeable itself after approval):", [_oc_key]),
	"kubectl edit operatorcondition -n %s %s",
	[_oc_namespace, _oc_object_name],
)

# METADATA
# title: An admin override in the OperatorCondition sets Upgradeable to something other than True
# custom:
#   code: OperatorNotUpgradeable
deny contains denial if {
	not lib.extension_document
	o := _override_upgradeable
	o.status != "True"
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("%s: the override in %s sets Upgradeable=%s: %s", [_installed, _oc_name, o.status, _said(o)]),
		[_override_fact(o)],
		[_override_remedy("Upgradeable", "True")],
	)
}

# METADATA
# title: The installed operator reports Upgradeable=False
# custom:
#   code: OperatorNotUpgradeable
deny contains denial if {
	not lib.extension_document
	c := _reported_upgradeable
	c.status == "False"
	not _reported_stale
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("%s reports Upgradeable=False: %s", [_installed, _said(c)]),
		[_oc_fact(c)],
		[
			{"text": sprintf("the operator reports Upgradeable=True (or removes the condition) in OperatorCondition %s once it is safe to upgrade; OLM copies spec.conditions to status.conditions", [_oc_key])},
			_olm_override_remedy,
		],
	)
}

# METADATA
# title: The operator's Upgradeable condition was set for an older generation of its OperatorCondition
# custom:
#   code: OperatorConditionStale
deny contains denial if {
	not lib.extension_document
	_reported_stale
	c := _reported_upgradeable
	observed := object.get(c, "observedGeneration", 0)
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"%s: Upgradeable=%s in %s was observed at generation %d, but the object is at generation %d; OLM has not yet copied the operator's latest conditions",
			[_installed, c.status, _oc_name, observed, _generation],
		),
		[sprintf("%s (observed at generation %v; the object is at generation %v)", [_oc_fact(c), observed, _generation])],
		[
			{"text": sprintf("OLM copies the operator's latest conditions (generation %v) to status.conditions; if it does not, check that OLM's olm-operator is running", [_generation])},
			_olm_override_remedy,
		],
	)
}

# METADATA
# title: The operator set Upgradeable in spec.conditions, but OLM has not yet copied it to status
# custom:
#   code: OperatorConditionStale
deny contains denial if {
	not lib.extension_document
	not _reported_upgradeable
	not _override_upgradeable
	s := lib.condition(_spec_conditions, "Upgradeable")
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"%s: spec.conditions of %s sets Upgradeable=%s, but status.conditions has no Upgradeable yet; OLM has not yet copied it",
			[_installed, _oc_name, s.status],
		),
		[sprintf("OperatorCondition %s: spec.conditions sets Upgradeable=%v, but status.conditions has no Upgradeable yet", [_oc_object_name, s.status])],
		[_copy_remedy, _olm_override_remedy],
	)
}

# _upgrading is the Upgrading condition in effect: an override wins, else status.conditions.
# _upgrading_why are the facts and remedies that go with it.
_upgrading := o if {
	o := _override_upgrading
} else := lib.condition(_status_conditions, "Upgrading")

_upgrading_why := {"facts": [_override_fact(o)], "lift": [_override_remedy("Upgrading", "False")]} if {
	o := _override_upgrading
} else := {
	"facts": [_oc_fact(_upgrading)],
	"lift": [{"text": sprintf("the operator reports Upgrading=False in OperatorCondition %s when its own upgrade work is done", [_oc_key])}],
}

# METADATA
# title: The installed operator reports that it is upgrading
# custom:
#   code: OperatorUpgrading
deny contains denial if {
	not lib.extension_document
	_upgrading.status == "True"
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("%s reports Upgrading=True: %s", [_installed, _said(_upgrading)]),
		_upgrading_why.facts,
		_upgrading_why.lift,
	)
}

# ----------------------------------------------------------------------------------------------
# Health of the operands (tollgate.health, which words the denials: tollgate.extension denies
# the same way). The facts are the operands at the worst status.

# METADATA
# title: An operand of the installed operator is degraded
# custom:
#   code: OperatorDegraded
deny contains denial if {
	not lib.extension_document
	h := health.hold("Degraded", _installed)
	denial := lib.explained(rego.metadata.rule(), h.message, h.facts, h.lift)
}

# METADATA
# title: An operand of the installed operator is progressing
# custom:
#   code: OperatorProgressing
deny contains denial if {
	not lib.extension_document
	h := health.hold("Progressing", _installed)
	denial := lib.explained(rego.metadata.rule(), h.message, h.facts, h.lift)
}

# ----------------------------------------------------------------------------------------------
# The Subscription's own source catalog. Other visible catalogs never deny (they only show in
# the CatalogSourcesUnhealthy condition). A missing source catalog denies: fail closed. Each
# denial names the fact its condition reports: a missing or unhealthy source catalog is
# CatalogSourceUnhealthy (condition CatalogSourcesUnhealthy, reason CatalogSourceNotFound when
# missing), an invalid or invisible one CatalogSourceInvalid.

_source := input.sourceCatalog

default _source_state := ""

_source_state := _source.status.connectionState.lastObservedState

# _repoint_source is the command that points the Subscription at another catalog (NAME and
# NAMESPACE are placeholders for the person to fill in).
_repoint_source(text) := lib.remedy(
	text,
	`kubectl patch subscription -n %s %s --type merge -p '{"spec":{"source":"NAME","sourceNamespace":"NAMESPACE"}}'`,
	[lib.subscription_namespace, lib.name(input.subscription)],
)

# METADATA
# title: The Subscription's source catalog does not exist
# custom:
#   code: CatalogSourceUnhealthy
deny contains denial if {
	not lib.extension_document
	_source == null
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"the source catalog %s does not exist, so the upgrade cannot be resolved from it: create the CatalogSource, or point spec.source and spec.sourceNamespace at an existing one",
			[lib.source_catalog_key],
		),
		[sprintf("CatalogSource %s does not exist", [lib.source_catalog_key])],
		[_repoint_source(sprintf("create the CatalogSource %s, or point the Subscription at an existing catalog:", [lib.source_catalog_key]))],
	)
}

# METADATA
# title: The Subscription's source catalog is not READY
# custom:
#   code: CatalogSourceUnhealthy
deny contains denial if {
	not lib.extension_document
	_source != null
	_source_state != "READY"
	denial := lib.explained(
		rego.metadata.rule(),
		_not_ready_message,
		[_connection_fact],
		[
			{"text": "OLM must reach the catalog's registry (status.connectionState.lastObservedState READY): check the catalog's registry pod or address"},
			_repoint_source("or point the Subscription at a healthy catalog:"),
		],
	)
}

_not_ready_message := sprintf(
	"the source catalog %s has no connection state yet (status.connectionState), so its health is unknown; wait for OLM to connect to its registry",
	[lib.source_catalog_key],
) if {
	_source_state == ""
} else := sprintf(
	"the source catalog %s is %s, not READY: OLM cannot serve the upgrade until its registry is reachable (check the catalog's registry pod or address)",
	[lib.source_catalog_key, _source_state],
)

_connection := lib.get(_source, ["status", "connectionState"], {})

_connection_fact := sprintf("CatalogSource %s has no status.connectionState yet", [lib.source_catalog_key]) if {
	_source_state == ""
} else := concat("", [
	sprintf("CatalogSource %s: connection %v", [lib.source_catalog_key, _source_state]),
	_connection_detail(", last connected %s", "lastConnect"),
	_connection_detail(", registry at %s", "address"),
])

_connection_detail(format, key) := sprintf(format, [value]) if {
	value := _connection[key]
	is_string(value)
	value != ""
} else := ""

# METADATA
# title: The Subscription's source catalog is in a namespace OLM does not resolve from
# custom:
#   code: CatalogSourceInvalid
deny contains denial if {
	not lib.extension_document
	_source != null

	# The global catalog namespace first: most source catalogs live there, where one comparison
	# settles it.
	lib.source_namespace != lib.global_catalog_namespace
	lib.source_namespace != lib.subscription_namespace
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"the source catalog %s is neither in the Subscription's namespace %s nor in the global catalog namespace %s, so OLM does not resolve from it and the plan cannot have come from it: move the catalog, or point spec.sourceNamespace at a visible one",
			[lib.source_catalog_key, lib.subscription_namespace, lib.global_catalog_namespace],
		),
		[sprintf(
			"CatalogSource %s is in namespace %s; OLM resolves this Subscription only from catalogs in its own namespace %s and in the global catalog namespace %s",
			[lib.source_catalog_key, lib.source_namespace, lib.subscription_namespace, lib.global_catalog_namespace],
		)],
		[_repoint_source(sprintf(
			"move the catalog to namespace %s or %s, or point the Subscription at a catalog there:",
			[lib.subscription_namespace, lib.global_catalog_namespace],
		))],
	)
}

# METADATA
# title: The Subscription's source catalog has an invalid spec
# custom:
#   code: CatalogSourceInvalid
deny contains denial if {
	not lib.extension_document
	_source != null
	found := catalogsource.source_violations
	found != set()
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("the source catalog %s is invalid: %s", [
			lib.source_catalog_key,
			concat("; ", [sprintf("%s %s", [v.field, v.message]) | some v in sort(found)]),
		]),
		[sprintf("CatalogSource %s: %s %s", [lib.source_catalog_key, v.field, v.message]) | some v in sort(found)],
		[lib.remedy(
			"fix the CatalogSource's spec as the facts say:",
			"kubectl edit catalogsource -n %s %s",
			[lib.get(_source, ["metadata", "namespace"], ""), lib.name(_source)],
		)],
	)
}

# ----------------------------------------------------------------------------------------------
# The installed CSV. On an upgrade (the Subscription names an installed CSV) Tollgate checks
# that operator: its OperatorCondition and its operands. When the CSV itself is gone, neither
# can be trusted (the operands are found through the CSV's owned CRDs), so the upgrade is held
# until OLM settles. A first install has no installed CSV and is not concerned.

# METADATA
# title: The CSV the Subscription reports as installed does not exist
# custom:
#   code: InstalledCSVMissing
deny contains denial if {
	not lib.extension_document
	lib.installed_csv_name != ""
	input.installedCSV == null
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"the Subscription reports %s as installed, but no such ClusterServiceVersion exists in namespace %s, so Tollgate cannot check the operator it would upgrade (its OperatorCondition and operands): wait for OLM to settle, or override InstalledCSVMissing if the CSV was removed on purpose",
			[_installed, lib.subscription_namespace],
		),
		[sprintf(
			"Subscription %s reports status.installedCSV %s, but no ClusterServiceVersion %s exists in namespace %s",
			[lib.namespaced_name(input.subscription), _installed, _installed, lib.subscription_namespace],
		)],
		[{"text": "OLM settles: it reinstalls the CSV or updates the Subscription's status.installedCSV; if nothing changes, check that OLM's olm-operator and catalog-operator are running"}],
	)
}

# ----------------------------------------------------------------------------------------------
# OperatorGroups. OLM acts only in a namespace with exactly one: beside a second, its resolver
# fails ("expected 1 OperatorGroup") and CSVs fail with TooManyOperatorGroups. A plan approved
# then would wait and install once the extra group is gone, with operands read in targets that
# were not the operator's. Never overridden (tollgate.main): the way out is one group.

_groups := object.get(input, "operatorGroups", [])

# METADATA
# title: The Subscription's namespace holds more than one OperatorGroup
# custom:
#   code: TooManyOperatorGroups
deny contains denial if {
	not lib.extension_document
	count(_groups) > 1
	names := [lib.name(g) | some g in _groups]
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"namespace %s holds %d OperatorGroups (%s): OLM acts only in a namespace with exactly one, so Tollgate cannot tell which namespaces the operator serves and holds the upgrade",
			[lib.subscription_namespace, count(_groups), concat(", ", names)],
		),
		[sprintf("OperatorGroup %s/%s targets %v", [lib.subscription_namespace, lib.name(g), lib.get(g, ["status", "namespaces"], [])]) | some g in _groups],
		[lib.remedy(
			sprintf("an admin deletes every OperatorGroup of namespace %s but the operator's own; list them with:", [lib.subscription_namespace]),
			"kubectl get operatorgroups -n %s",
			[lib.subscription_namespace],
		)],
	)
}

# ----------------------------------------------------------------------------------------------
# InstallPlans that bundle other operators: every CSV of a plan must be allowed, since approving
# the plan installs them all. input.installPlanPeers carries each other CSV's own decision; a
# peer blocks unless a Subscription wants it and its decision is exactly allowed: true, or it
# is a new dependency the plan subscribes to (newDependency) whose own decision is exactly
# allowed: true (a policy may say allowed: false without a denial, so the codes alone do not
# tell). This denial
# is never overridden (tollgate.main): its remedies are the other Subscription's.

# METADATA
# title: The InstallPlan also installs an operator that is blocked or unknown
# custom:
#   code: InstallPlanIncludesBlockedOperator
deny contains denial if {
	not lib.extension_document
	some peer in object.get(input, "installPlanPeers", [])
	_peer_blocks(peer)
	why := _peer_why(peer)
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("%s: OLM installs every operator of a plan together, so approving it would install that one too", [why.fact]),
		[why.fact],
		[why.remedy],
	)
}

_peer_blocks(peer) if {
	not _peer_subscription(peer)
	not _new_dependency(peer)
}

_peer_blocks(peer) if not lib.get(peer, ["allowed"], false) == true

_peer_blocks(peer) if lib.get(peer, ["unattributed"], "") != ""

# An operator the plan subscribes to (a package another bundle requires): package approval
# decides it as the Subscription the plan creates, and says so in newDependency.
_new_dependency(peer) if lib.get(peer, ["newDependency"], null) != null

_peer_subscription(peer) := s if {
	s := lib.get(peer, ["subscription"], null)
	s != null
}

_peer_why(peer) := {
	"fact": sprintf("InstallPlan %v also installs %v, which Tollgate cannot attribute to one operator: %v", [plan, csv, why]),
	"remedy": {"text": sprintf(
		"read what InstallPlan %v says of %v (kubectl get installplan -n %s %v -o yaml) and approve it by hand only if you vouch for it",
		[plan, csv, lib.subscription_namespace, plan],
	)},
} if {
	plan := lib.get(peer, ["installPlan"], "")
	csv := lib.get(peer, ["csv"], "")
	why := lib.get(peer, ["unattributed"], "")
	why != ""
} else := {
	"fact": sprintf("InstallPlan %v also installs %v, which no Subscription in namespace %s wants", [plan, csv, lib.subscription_namespace]),
	"remedy": {"text": sprintf(
		"approve InstallPlan %v by hand if you vouch for %v, or remove the stray CSV %v from namespace %s",
		[plan, csv, csv, lib.subscription_namespace],
	)},
} if {
	plan := lib.get(peer, ["installPlan"], "")
	csv := lib.get(peer, ["csv"], "")
	not _peer_subscription(peer)
	not _new_dependency(peer)
} else := {
	"fact": sprintf("InstallPlan %v also installs %v, a dependency it subscribes to (package %v, Subscription %v, which OLM creates on approval), %s", [plan, csv, pkg, sub, _peer_held(peer)]),
	"remedy": {"text": sprintf(
		"see why with `kubectl tollgate eval` or `kubectl tollgate explain` on InstallPlan %v, and lift what holds %v as for any Subscription of package %v, or approve the plan by hand if you vouch for it",
		[plan, csv, pkg],
	)},
} if {
	plan := lib.get(peer, ["installPlan"], "")
	csv := lib.get(peer, ["csv"], "")
	pkg := lib.get(peer, ["newDependency", "package"], "")
	sub := lib.get(peer, ["newDependency", "subscription"], "")
	_new_dependency(peer)
} else := {
	"fact": sprintf("InstallPlan %v also installs %v for Subscription %s, %s", [plan, csv, key, _peer_held(peer)]),
	"remedy": {
		"text": sprintf("lift what holds %s (its own explanation says how):", [key]),
		"subscription": {"namespace": ns, "name": name},
	},
} if {
	plan := lib.get(peer, ["installPlan"], "")
	csv := lib.get(peer, ["csv"], "")
	ns := lib.get(peer, ["subscription", "namespace"], "")
	name := lib.get(peer, ["subscription", "name"], "")
	key := sprintf("%v/%v", [ns, name])
}

# _peer_held says what holds a peer: its standing denial codes, or only its decision.
_peer_held(peer) := sprintf("which is held by %s", [concat(", ", codes)]) if {
	codes := sort([c | some c in lib.get(peer, ["codes"], []); is_string(c)])
	count(codes) > 0
} else := "whose policy does not allow it"
