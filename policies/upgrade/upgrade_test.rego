package tollgate.upgrade_test

import data.tollgate.fixtures_test as f
import data.tollgate.upgrade

_deny(doc) := d if {
	d := upgrade.deny with input as doc
}

_codes(doc) := f.codes(_deny(doc))

_message(doc, code) := [d.message | some d in _deny(doc); d.code == code][0]

# _oc is base with an OperatorCondition at generation gen.
_oc(gen, overrides, spec_conditions, status_conditions) := f.with_patch({"operatorCondition": object.union(
	f.operator_condition(gen, spec_conditions, status_conditions),
	{"spec": {"overrides": overrides}},
)})

_override(t, status, message) := {"type": t, "status": status, "reason": "AdminOverride", "message": message}

test_a_healthy_upgrade_has_no_denials if _deny(f.base) == set()

test_every_code_is_in_the_vocabulary if {
	vocabulary := {
		"OperatorNotUpgradeable", "OperatorConditionStale", "OperatorUpgrading", "OperatorDegraded",
		"OperatorProgressing", "CatalogSourceUnhealthy", "CatalogSourceInvalid",
		"InstallPlanIncludesBlockedOperator", "InstalledCSVMissing",
	}
	doc := f.with_patch({
		"operatorCondition": f.operator_condition(3, [], [f.upgradeable("False", "m", 2)]),
		"sourceCatalog": null,
		"operands": [f.operand("x", [])],
		"installPlanPeers": [f.peer("other.v1", null, false, [])],
	})
	count(_deny(doc)) > 0
	every code in _codes(doc) {
		code in vocabulary
	}
}

# --- OLM's Upgradeable rule

test_no_operator_condition_allows if _codes(f.with_patch({"operatorCondition": null})) == set()

test_no_upgradeable_condition_allows if _codes(_oc(1, [], [], [])) == set()

test_upgradeable_true_allows if _codes(_oc(1, [], [], [f.upgradeable("True", "ready", 1)])) == set()

test_upgradeable_unknown_allows if _codes(_oc(1, [], [], [f.upgradeable("Unknown", "checking", 1)])) == set()

test_upgradeable_false_denies if {
	doc := _oc(1, [], [], [f.upgradeable("False", "migrating storage", 1)])
	_codes(doc) == {"OperatorNotUpgradeable"}
	_message(doc, "OperatorNotUpgradeable") == "etcdoperator.v0.9.2 reports Upgradeable=False: migrating storage"
}

test_upgradeable_false_without_message_quotes_the_reason if {
	doc := _oc(1, [], [], [object.union(f.upgradeable("False", "", 1), {"reason": "Migrating"})])
	_message(doc, "OperatorNotUpgradeable") == "etcdoperator.v0.9.2 reports Upgradeable=False: Migrating"
}

test_override_true_allows_despite_false if {
	_codes(_oc(1, [_override("Upgradeable", "True", "safe")], [], [f.upgradeable("False", "migrating", 1)])) == set()
}

test_override_true_allows_despite_a_stale_condition if {
	_codes(_oc(5, [_override("Upgradeable", "True", "safe")], [], [f.upgradeable("False", "migrating", 2)])) == set()
}

test_override_false_denies_despite_true if {
	doc := _oc(1, [_override("Upgradeable", "False", "hold for the audit")], [], [f.upgradeable("True", "ready", 1)])
	_codes(doc) == {"OperatorNotUpgradeable"}
	_message(doc, "OperatorNotUpgradeable") == "etcdoperator.v0.9.2: the override in OperatorCondition operators/etcdoperator.v0.9.2 sets Upgradeable=False: hold for the audit"
}

test_override_unknown_denies if {
	# OLM allows only an override whose status is True (isOperatorUpgradeable returns "not
	# upgradeable" for any other override status, Unknown included): approving would let OLM
	# hold the upgrade anyway, so Tollgate denies too, even over a status Upgradeable=True.
	doc := _oc(1, [_override("Upgradeable", "Unknown", "")], [], [f.upgradeable("True", "ready", 1)])
	_codes(doc) == {"OperatorNotUpgradeable"}
	_message(doc, "OperatorNotUpgradeable") == "etcdoperator.v0.9.2: the override in OperatorCondition operators/etcdoperator.v0.9.2 sets Upgradeable=Unknown: AdminOverride"
}

test_an_override_of_another_type_does_not_count if {
	_codes(_oc(1, [_override("Foo", "True", "")], [], [f.upgradeable("False", "migrating", 1)])) == {"OperatorNotUpgradeable"}
}

test_stale_condition_denies_instead_of_its_status if {
	doc := _oc(3, [], [], [f.upgradeable("True", "ready", 2)])
	_codes(doc) == {"OperatorConditionStale"}
	contains(_message(doc, "OperatorConditionStale"), "observed at generation 2, but the object is at generation 3")
}

test_stale_false_condition_is_reported_once_as_stale if {
	_codes(_oc(3, [], [], [f.upgradeable("False", "migrating", 2)])) == {"OperatorConditionStale"}
}

test_a_condition_without_observed_generation_is_stale if {
	_codes(_oc(1, [], [], [f.cond("Upgradeable", "True", "Ready", "", "2026-11-22T09:00:00Z")])) == {"OperatorConditionStale"}
}

test_spec_condition_not_yet_copied_is_stale if {
	doc := _oc(2, [], [f.cond("Upgradeable", "False", "Migrating", "migrating", "2026-11-22T09:00:00Z")], [])
	_codes(doc) == {"OperatorConditionStale"}
	contains(_message(doc, "OperatorConditionStale"), "spec.conditions")
}

test_spec_and_status_both_present_follow_status if {
	doc := _oc(2, [], [f.cond("Upgradeable", "False", "Migrating", "migrating", "2026-11-22T09:00:00Z")], [f.upgradeable("False", "migrating", 2)])
	_codes(doc) == {"OperatorNotUpgradeable"}
}

test_operator_condition_is_ignored_on_a_first_install if {
	doc := object.union(f.first_install, {"operatorCondition": f.operator_condition(1, [], [f.upgradeable("False", "migrating", 1)])})
	_codes(doc) == set()
}

# --- Upgrading

test_upgrading_true_denies if {
	doc := _oc(1, [], [], [f.upgradeable("True", "ready", 1), f.cond("Upgrading", "True", "Migrating", "migrating to v2", "2026-11-22T09:00:00Z")])
	_codes(doc) == {"OperatorUpgrading"}
	_message(doc, "OperatorUpgrading") == "etcdoperator.v0.9.2 reports Upgrading=True: migrating to v2"
}

test_upgrading_false_allows if {
	_codes(_oc(1, [], [], [f.cond("Upgrading", "False", "Done", "", "2026-11-22T09:00:00Z")])) == set()
}

test_an_upgrading_override_wins if {
	_codes(_oc(1, [_override("Upgrading", "False", "stuck flag")], [], [f.cond("Upgrading", "True", "Migrating", "", "2026-11-22T09:00:00Z")])) == set()
}

# --- health

test_degraded_operand_denies if {
	doc := f.with_patch({"operands": [f.operand("example", [f.cond("Degraded", "True", "HealFailed", "1 of 3 members down", "2026-11-22T09:00:00Z")])]})
	"OperatorDegraded" in _codes(doc)
	_message(doc, "OperatorDegraded") == "etcdoperator.v0.9.2 is Degraded (HealFailed): 1 of 1 operands report Degraded=True; most recent: EtcdCluster operators/example: 1 of 3 members down"
}

test_progressing_operand_denies if {
	doc := f.with_patch({"operands": [f.operand("example", [
		f.cond("Available", "True", "HealInProgress", "", "2026-11-22T09:00:00Z"),
		f.cond("Progressing", "True", "HealInProgress", "replacing member", "2026-11-22T09:00:00Z"),
		f.cond("Degraded", "False", "HealInProgress", "", "2026-11-22T09:00:00Z"),
	])]})
	_codes(doc) == {"OperatorProgressing"}
}

test_unknown_health_does_not_deny if _codes(f.with_patch({"operands": [f.operand("bare", [])]})) == set()

# --- the source catalog

test_missing_source_catalog_denies if {
	doc := f.with_patch({"sourceCatalog": null})
	_codes(doc) == {"CatalogSourceUnhealthy"}
	contains(_message(doc, "CatalogSourceUnhealthy"), "olm/operatorhubio does not exist")
}

test_source_catalog_not_ready_denies if {
	doc := f.with_patch({"sourceCatalog": f.catalog("olm", "operatorhubio", "TRANSIENT_FAILURE")})
	_codes(doc) == {"CatalogSourceUnhealthy"}
	contains(_message(doc, "CatalogSourceUnhealthy"), "is TRANSIENT_FAILURE, not READY")
}

test_source_catalog_without_status_denies if {
	doc := f.with_patch({"sourceCatalog": {"status": null}})
	_codes(doc) == {"CatalogSourceUnhealthy"}
	contains(_message(doc, "CatalogSourceUnhealthy"), "no connection state yet")
}

test_other_unhealthy_catalogs_do_not_deny if {
	_codes(f.with_patch({"catalogSources": [f.catalog("olm", "operatorhubio", "READY"), f.catalog("operators", "private", "TRANSIENT_FAILURE")]})) == set()
}

test_invalid_source_catalog_denies if {
	bad := object.union(f.catalog("olm", "operatorhubio", "READY"), {"spec": {"catalogImageSource": {"catalogImage": ""}}})
	doc := f.with_patch({"sourceCatalog": bad})
	_codes(doc) == {"CatalogSourceInvalid"}
	contains(_message(doc, "CatalogSourceInvalid"), "spec.catalogImageSource.catalogImage is required")
}

# --- peers bundled in the same InstallPlan

_sub := {"namespace": "operators", "name": "prometheus"}

test_clean_peer_allows if _codes(f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, true, [])]})) == set()

test_peer_without_subscription_denies if {
	doc := f.with_patch({"installPlanPeers": [f.peer("stray.v1", null, true, [])]})
	_codes(doc) == {"InstallPlanIncludesBlockedOperator"}
	contains(_message(doc, "InstallPlanIncludesBlockedOperator"), "InstallPlan install-abc also installs stray.v1, which no Subscription owns")
}

test_unevaluated_peer_denies if {
	doc := f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, false, [])]})
	_message(doc, "InstallPlanIncludesBlockedOperator") == "InstallPlan install-abc also installs prometheus.v0.47, whose Subscription operators/prometheus has not been evaluated yet"
}

test_blocked_peer_denies if {
	doc := f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, true, ["OperatorUpgrading", "OperatorDegraded"])]})
	_message(doc, "InstallPlanIncludesBlockedOperator") == "InstallPlan install-abc also installs prometheus.v0.47, whose Subscription operators/prometheus is blocked by OperatorDegraded, OperatorUpgrading"
}

test_each_blocking_peer_is_named if {
	doc := f.with_patch({"installPlanPeers": [f.peer("a.v1", null, true, []), f.peer("b.v1", _sub, false, [])]})
	count(_deny(doc)) == 2
}

# --- every denial names the exact rule (its METADATA title), even where rules share a code

_titles(doc, code) := {d.title | some d in _deny(doc); d.code == code}

test_every_denial_has_a_title if {
	doc := f.with_patch({
		"operatorCondition": f.operator_condition(3, [], [f.upgradeable("False", "m", 2), f.cond("Upgrading", "True", "M", "m", "2026-11-22T09:00:00Z")]),
		"sourceCatalog": null,
		"operands": [f.operand("x", [f.cond("Degraded", "True", "HealFailed", "", ""), f.cond("Progressing", "True", "HealInProgress", "", "")])],
		"installPlanPeers": [f.peer("other.v1", null, false, [])],
	})
	count(_deny(doc)) == 6
	every d in _deny(doc) {
		is_string(d.title)
		d.title != ""
	}
}

test_not_upgradeable_titles_tell_override_from_status if {
	_titles(_oc(1, [_override("Upgradeable", "False", "hold")], [], []), "OperatorNotUpgradeable") == {"An admin override in the OperatorCondition sets Upgradeable to something other than True"}
	_titles(_oc(1, [], [], [f.upgradeable("False", "m", 1)]), "OperatorNotUpgradeable") == {"The installed operator reports Upgradeable=False"}
}

test_stale_titles_tell_generation_from_not_yet_copied if {
	_titles(_oc(3, [], [], [f.upgradeable("True", "ready", 2)]), "OperatorConditionStale") == {"The operator's Upgradeable condition was set for an older generation of its OperatorCondition"}
	_titles(_oc(2, [], [f.cond("Upgradeable", "False", "M", "m", "2026-11-22T09:00:00Z")], []), "OperatorConditionStale") == {"The operator set Upgradeable in spec.conditions, but OLM has not yet copied it to status"}
}

test_catalog_titles_tell_missing_from_not_ready if {
	_titles(f.with_patch({"sourceCatalog": null}), "CatalogSourceUnhealthy") == {"The Subscription's source catalog does not exist"}
	_titles(f.with_patch({"sourceCatalog": f.catalog("olm", "operatorhubio", "CONNECTING")}), "CatalogSourceUnhealthy") == {"The Subscription's source catalog is not READY"}
}

# --- a source catalog OLM does not resolve from

_elsewhere := f.with_patch({
	"subscription": {"spec": {"sourceNamespace": "elsewhere"}},
	"sourceCatalog": f.catalog("elsewhere", "operatorhubio", "READY"),
})

test_a_source_catalog_outside_the_visible_namespaces_denies if {
	_codes(_elsewhere) == {"CatalogSourceInvalid"}
	_titles(_elsewhere, "CatalogSourceInvalid") == {"The Subscription's source catalog is in a namespace OLM does not resolve from"}
	contains(_message(_elsewhere, "CatalogSourceInvalid"), "elsewhere/operatorhubio is neither in the Subscription's namespace operators nor in the global catalog namespace olm")
}

test_a_source_catalog_outside_the_visible_namespaces_denies_a_first_install_too if {
	doc := object.union(f.first_install, {
		"subscription": {"spec": {"sourceNamespace": "elsewhere"}},
		"sourceCatalog": f.catalog("elsewhere", "operatorhubio", "READY"),
	})
	_codes(doc) == {"CatalogSourceInvalid"}
}

test_a_source_catalog_in_the_subscriptions_namespace_is_visible if {
	doc := f.with_patch({
		"subscription": {"spec": {"sourceNamespace": "operators", "source": "private"}},
		"sourceCatalog": f.catalog("operators", "private", "READY"),
	})
	_codes(doc) == set()
}

test_the_global_catalog_namespace_follows_the_config if {
	doc := f.with_patch({
		"config": {"globalCatalogNamespace": "marketplace"},
		"subscription": {"spec": {"sourceNamespace": "marketplace"}},
		"sourceCatalog": f.catalog("marketplace", "operatorhubio", "READY"),
	})
	_codes(doc) == set()
	_codes(object.union(doc, {"config": {"globalCatalogNamespace": "olm"}})) == {"CatalogSourceInvalid"}
}

# --- the installed CSV

test_a_missing_installed_csv_denies_an_upgrade if {
	doc := f.with_patch({"installedCSV": null})
	_codes(doc) == {"InstalledCSVMissing"}
	_titles(doc, "InstalledCSVMissing") == {"The CSV the Subscription reports as installed does not exist"}
	startswith(_message(doc, "InstalledCSVMissing"), "the Subscription reports etcdoperator.v0.9.2 as installed, but no such ClusterServiceVersion exists in namespace operators")
}

test_a_first_install_without_an_installed_csv_is_allowed if {
	_codes(f.first_install) == set()
}
