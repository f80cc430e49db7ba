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
# yet copied into status as stale. None of this applies on a first install.

_installed := lib.installed_csv_name

_oc := input.operatorCondition if {
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

_override(t) := lib.condition(_overrides, t)

_status_condition(t) := lib.condition(_status_conditions, t)

_spec_condition(t) := lib.condition(_spec_conditions, t)

default _generation := 0

_generation := _oc.metadata.generation

_said(c) := lib.or_else(object.get(c, "message", ""), lib.or_else(object.get(c, "reason", ""), "no message"))

# METADATA
# title: An admin override in the OperatorCondition sets Upgradeable to something other than True
# custom:
#   code: OperatorNotUpgradeable
deny contains denial if {
	o := _override("Upgradeable")
	o.status != "True"
	denial := lib.denial(rego.metadata.rule(), sprintf(
		"%s: the override in %s sets Upgradeable=%s: %s",
		[_installed, _oc_name, o.status, _said(o)],
	))
}

# METADATA
# title: The installed operator reports Upgradeable=False
# custom:
#   code: OperatorNotUpgradeable
deny contains denial if {
	not _override("Upgradeable")
	c := _status_condition("Upgradeable")
	not _stale(c)
	c.status == "False"
	denial := lib.denial(rego.metadata.rule(), sprintf("%s reports Upgradeable=False: %s", [_installed, _said(c)]))
}

_stale(c) if object.get(c, "observedGeneration", 0) != _generation

# METADATA
# title: The operator's Upgradeable condition was set for an older generation of its OperatorCondition
# custom:
#   code: OperatorConditionStale
deny contains denial if {
	not _override("Upgradeable")
	c := _status_condition("Upgradeable")
	_stale(c)
	denial := lib.denial(rego.metadata.rule(), sprintf(
		"%s: Upgradeable=%s in %s was observed at generation %d, but the object is at generation %d; OLM has not yet copied the operator's latest conditions",
		[_installed, c.status, _oc_name, object.get(c, "observedGeneration", 0), _generation],
	))
}

# METADATA
# title: The operator set Upgradeable in spec.conditions, but OLM has not yet copied it to status
# custom:
#   code: OperatorConditionStale
deny contains denial if {
	not _override("Upgradeable")
	s := _spec_condition("Upgradeable")
	not _status_condition("Upgradeable")
	denial := lib.denial(rego.metadata.rule(), sprintf(
		"%s: spec.conditions of %s sets Upgradeable=%s, but status.conditions has no Upgradeable yet; OLM has not yet copied it",
		[_installed, _oc_name, s.status],
	))
}

# _upgrading is the Upgrading condition in effect: an override wins, else status.conditions.
_upgrading := o if {
	o := _override("Upgrading")
} else := _status_condition("Upgrading")

# METADATA
# title: The installed operator reports that it is upgrading
# custom:
#   code: OperatorUpgrading
deny contains denial if {
	_upgrading.status == "True"
	denial := lib.denial(rego.metadata.rule(), sprintf("%s reports Upgrading=True: %s", [_installed, _said(_upgrading)]))
}

# ----------------------------------------------------------------------------------------------
# Health of the operands (tollgate.health).

# METADATA
# title: An operand of the installed operator is degraded
# custom:
#   code: OperatorDegraded
deny contains denial if {
	c := health.aggregate("Degraded")
	c.status == "True"
	denial := lib.denial(rego.metadata.rule(), sprintf("%s is Degraded (%s): %s", [_installed, c.reason, c.message]))
}

# METADATA
# title: An operand of the installed operator is progressing
# custom:
#   code: OperatorProgressing
deny contains denial if {
	c := health.aggregate("Progressing")
	c.status == "True"
	denial := lib.denial(rego.metadata.rule(), sprintf("%s is Progressing (%s): %s", [_installed, c.reason, c.message]))
}

# ----------------------------------------------------------------------------------------------
# The Subscription's own source catalog. Other visible catalogs never deny (they only show in
# the CatalogSourcesUnhealthy condition). A missing source catalog denies: fail closed.

_source := input.sourceCatalog

default _source_state := ""

_source_state := _source.status.connectionState.lastObservedState

# METADATA
# title: The Subscription's source catalog does not exist
# custom:
#   code: CatalogSourceUnhealthy
deny contains denial if {
	_source == null
	denial := lib.denial(rego.metadata.rule(), sprintf(
		"the source catalog %s does not exist, so the upgrade cannot be resolved from it: create the CatalogSource, or point spec.source and spec.sourceNamespace at an existing one",
		[lib.source_catalog_key],
	))
}

# METADATA
# title: The Subscription's source catalog is not READY
# custom:
#   code: CatalogSourceUnhealthy
deny contains denial if {
	_source != null
	_source_state != "READY"
	denial := lib.denial(rego.metadata.rule(), _not_ready_message)
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

# METADATA
# title: The Subscription's source catalog is in a namespace OLM does not resolve from
# custom:
#   code: CatalogSourceInvalid
deny contains denial if {
	_source != null
	not lib.source_namespace in {lib.subscription_namespace, lib.global_catalog_namespace}
	denial := lib.denial(rego.metadata.rule(), sprintf(
		"the source catalog %s is neither in the Subscription's namespace %s nor in the global catalog namespace %s, so OLM does not resolve from it and the plan cannot have come from it: move the catalog, or point spec.sourceNamespace at a visible one",
		[lib.source_catalog_key, lib.subscription_namespace, lib.global_catalog_namespace],
	))
}

# METADATA
# title: The Subscription's source catalog has an invalid spec
# custom:
#   code: CatalogSourceInvalid
deny contains denial if {
	_source != null
	found := catalogsource.source_violations
	count(found) > 0
	denial := lib.denial(rego.metadata.rule(), sprintf("the source catalog %s is invalid: %s", [
		lib.source_catalog_key,
		concat("; ", [sprintf("%s %s", [v.field, v.message]) | some v in sort(found)]),
	]))
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
	_installed != ""
	input.installedCSV == null
	denial := lib.denial(rego.metadata.rule(), sprintf(
		"the Subscription reports %s as installed, but no such ClusterServiceVersion exists in namespace %s, so Tollgate cannot check the operator it would upgrade (its OperatorCondition and operands): wait for OLM to settle, or override InstalledCSVMissing if the CSV was removed on purpose",
		[_installed, lib.subscription_namespace],
	))
}

# ----------------------------------------------------------------------------------------------
# InstallPlans that bundle other operators: every CSV of a plan must be allowed, since approving
# the plan installs them all. A peer without a Subscription or not yet evaluated blocks.

# METADATA
# title: The InstallPlan also installs an operator that is blocked or unknown
# custom:
#   code: InstallPlanIncludesBlockedOperator
deny contains denial if {
	some peer in object.get(input, "installPlanPeers", [])
	why := _peer_blocks(peer)
	denial := lib.denial(rego.metadata.rule(), sprintf("InstallPlan %s also installs %s, %s", [peer.installPlan, peer.csv, why]))
}

_peer_blocks(peer) := "which no Subscription owns, so Tollgate cannot vouch for it: approve that plan by hand or remove the stray CSV from the namespace" if {
	object.get(peer, "subscription", null) == null
} else := sprintf("whose Subscription %s/%s has not been evaluated yet", [peer.subscription.namespace, peer.subscription.name]) if {
	not peer.evaluated
} else := sprintf("whose Subscription %s/%s is blocked by %s", [
	peer.subscription.namespace, peer.subscription.name,
	concat(", ", sort(peer.blockingCodes)),
]) if {
	count(object.get(peer, "blockingCodes", [])) > 0
}
