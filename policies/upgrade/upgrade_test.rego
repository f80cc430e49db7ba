package tollgate.upgrade_test

import data.tollgate.fixtures_test as f
import data.tollgate.health
import data.tollgate.subscription
import data.tollgate.upgrade

_deny(doc) := d if {
	d := upgrade.deny with input as doc
}

_codes(doc) := f.codes(_deny(doc))

_message(doc, code) := [d.message | some d in _deny(doc); d.code == code][0]

# _one is the only denial of code for doc.
_one(doc, code) := d if {
	[d] := [x | some x in _deny(doc); x.code == code]
}

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
		"InstallPlanIncludesBlockedOperator", "InstalledCSVMissing", "TooManyOperatorGroups",
	}
	doc := f.with_patch({
		"operatorCondition": f.operator_condition(3, [], [f.upgradeable("False", "m", 2)]),
		"sourceCatalog": null,
		"operands": [f.operand("x", [])],
		"installPlanPeers": [f.peer("other.v1", null, false, [])],
		"operatorGroups": [f.base.operatorGroup, _group("decoy", ["elsewhere"])],
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
	_message(doc, "InstallPlanIncludesBlockedOperator") == "InstallPlan install-abc also installs stray.v1, which no Subscription in namespace operators wants: OLM installs every operator of a plan together, so approving it would install that one too"
}

_dependency := object.union(f.peer("delta.v1", null, true, []), {"newDependency": {"subscription": "delta-stable-olm", "package": "delta"}})

test_peer_that_is_a_new_dependency_allows if _codes(f.with_patch({"installPlanPeers": [_dependency]})) == set()

test_peer_that_is_a_new_dependency_not_allowed_denies if {
	doc := f.with_patch({"installPlanPeers": [object.union(_dependency, {"allowed": false})]})
	_codes(doc) == {"InstallPlanIncludesBlockedOperator"}
}

test_peer_that_is_a_new_dependency_held_says_which_dependency if {
	doc := f.with_patch({"installPlanPeers": [object.union(_dependency, {"allowed": false, "codes": ["ChangeFreeze"]})]})
	_message(doc, "InstallPlanIncludesBlockedOperator") == "InstallPlan install-abc also installs delta.v1, a dependency it subscribes to (package delta, Subscription delta-stable-olm, which OLM creates on approval), which is held by ChangeFreeze: OLM installs every operator of a plan together, so approving it would install that one too"
}

# A peer Tollgate cannot attribute to one operator blocks, even when said allowed, and says why.
test_peer_unattributed_blocks_and_says_why if {
	doc := f.with_patch({"installPlanPeers": [object.union(_dependency, {"unattributed": "the plan has 2 Subscription steps for it"})]})
	_message(doc, "InstallPlanIncludesBlockedOperator") == "InstallPlan install-abc also installs delta.v1, which Tollgate cannot attribute to one operator: the plan has 2 Subscription steps for it: OLM installs every operator of a plan together, so approving it would install that one too"
}

test_peer_with_subscription_absent_denies if {
	doc := f.with_patch({"installPlanPeers": [object.remove(f.peer("stray.v1", null, true, []), {"subscription"})]})
	_codes(doc) == {"InstallPlanIncludesBlockedOperator"}
}

test_peer_not_allowed_without_codes_blocks if {
	doc := f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, false, [])]})
	_message(doc, "InstallPlanIncludesBlockedOperator") == "InstallPlan install-abc also installs prometheus.v0.47 for Subscription operators/prometheus, whose policy does not allow it: OLM installs every operator of a plan together, so approving it would install that one too"
}

test_peer_allowed_only_when_exactly_true if {
	every allowed in ["true", 1, null] {
		_codes(f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, allowed, [])]})) == {"InstallPlanIncludesBlockedOperator"}
	}
	_codes(f.with_patch({"installPlanPeers": [object.remove(f.peer("prometheus.v0.47", _sub, true, []), {"allowed"})]})) == {"InstallPlanIncludesBlockedOperator"}
}

test_blocked_peer_names_its_codes if {
	doc := f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, false, ["OperatorUpgrading", "OperatorDegraded"])]})
	startswith(_message(doc, "InstallPlanIncludesBlockedOperator"), "InstallPlan install-abc also installs prometheus.v0.47 for Subscription operators/prometheus, which is held by OperatorDegraded, OperatorUpgrading: ")
}

test_each_blocking_peer_is_named if {
	doc := f.with_patch({"installPlanPeers": [f.peer("a.v1", null, true, []), f.peer("b.v1", _sub, false, []), f.peer("c.v1", _sub, true, [])]})
	count(_deny(doc)) == 2
}

test_a_blocked_peer_is_the_fact_and_its_subscription_the_remedy if {
	doc := f.with_patch({"installPlanPeers": [f.peer("prometheus.v2", {"namespace": "demo", "name": "prometheus"}, false, ["OperatorDegraded"])]})
	d := _one(doc, "InstallPlanIncludesBlockedOperator")
	d.facts == ["InstallPlan install-abc also installs prometheus.v2 for Subscription demo/prometheus, which is held by OperatorDegraded"]
	d.lift == [{
		"text": "lift what holds demo/prometheus (its own explanation says how):",
		"subscription": {"namespace": "demo", "name": "prometheus"},
	}]
}

test_a_peer_without_subscription_is_approved_by_hand_or_removed if {
	d := _one(f.with_patch({"installPlanPeers": [f.peer("stray.v1", null, false, [])]}), "InstallPlanIncludesBlockedOperator")
	d.facts == ["InstallPlan install-abc also installs stray.v1, which no Subscription in namespace operators wants"]
	d.lift == [{"text": "approve InstallPlan install-abc by hand if you vouch for stray.v1, or remove the stray CSV stray.v1 from namespace operators"}]
}

test_peer_codes_that_are_not_strings_are_left_out if {
	doc := f.with_patch({"installPlanPeers": [f.peer("prometheus.v0.47", _sub, false, [7, "OperatorDegraded"])]})
	_one(doc, "InstallPlanIncludesBlockedOperator").facts == ["InstallPlan install-abc also installs prometheus.v0.47 for Subscription operators/prometheus, which is held by OperatorDegraded"]
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

# --- facts and remedies

_oc_edit := "kubectl edit operatorcondition -n operators etcdoperator.v0.9.2"

# _olm_override is the remedy that lifts a hold OLM applies too (Upgradeable=False, stale).
_olm_override := {
	"text": "or an admin overrides Upgradeable for OLM and Tollgate alike in spec.overrides of OperatorCondition operators/etcdoperator.v0.9.2 (an UpgradeGate waiver would not do: OLM checks Upgradeable itself after approval):",
	"command": _oc_edit,
}

_repoint := `kubectl patch subscription -n operators etcd --type merge -p '{"spec":{"source":"NAME","sourceNamespace":"NAMESPACE"}}'`

test_upgradeable_false_states_the_condition_and_waits_for_the_operator if {
	c := object.union(f.upgradeable("False", "migrating storage", 1), {"reason": "Migrating", "lastTransitionTime": "2026-11-22T01:07:11Z"})
	d := _one(_oc(1, [], [], [c]), "OperatorNotUpgradeable")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: Upgradeable=False since 2026-11-22T01:07:11Z: migrating storage (reason Migrating)"]
	d.lift == [
		{"text": "the operator reports Upgradeable=True (or removes the condition) in OperatorCondition operators/etcdoperator.v0.9.2 once it is safe to upgrade; OLM copies spec.conditions to status.conditions"},
		_olm_override,
	]
}

test_the_facts_describe_the_first_matching_condition if {
	first := object.union(f.upgradeable("False", "migrating storage", 1), {"reason": "Migrating"})
	second := object.union(f.upgradeable("True", "ready", 1), {"lastTransitionTime": "2026-11-22T09:30:00Z"})
	d := _one(_oc(1, [], [], [first, second]), "OperatorNotUpgradeable")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: Upgradeable=False since 2026-11-22T09:00:00Z: migrating storage (reason Migrating)"]
}

test_the_facts_describe_the_first_matching_override if {
	d := _one(_oc(1, [_override("Upgradeable", "False", "audit"), _override("Upgradeable", "True", "later")], [], []), "OperatorNotUpgradeable")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: spec.overrides sets Upgradeable=False (an admin override): audit (reason AdminOverride)"]
}

test_an_upgradeable_override_is_lifted_by_editing_the_operator_condition if {
	d := _one(_oc(1, [_override("Upgradeable", "False", "hold for the audit")], [], []), "OperatorNotUpgradeable")
	d.lift == [{
		"text": "an admin removes the Upgradeable override from spec.overrides of OperatorCondition operators/etcdoperator.v0.9.2, or sets its status to True:",
		"command": _oc_edit,
	}]
}

test_a_stale_condition_names_both_generations if {
	d := _one(_oc(3, [], [], [f.upgradeable("True", "ready", 2)]), "OperatorConditionStale")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: Upgradeable=True since 2026-11-22T09:00:00Z: ready (reason Test) (observed at generation 2; the object is at generation 3)"]
	d.lift == [
		{"text": "OLM copies the operator's latest conditions (generation 3) to status.conditions; if it does not, check that OLM's olm-operator is running"},
		_olm_override,
	]
}

test_a_spec_condition_not_yet_copied_waits_for_olm if {
	d := _one(_oc(2, [], [f.cond("Upgradeable", "False", "Migrating", "migrating", "2026-11-22T09:00:00Z")], []), "OperatorConditionStale")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: spec.conditions sets Upgradeable=False, but status.conditions has no Upgradeable yet"]
	d.lift == [
		{"text": "OLM copies the operator's spec.conditions to status.conditions; if it does not, check that OLM's olm-operator is running"},
		_olm_override,
	]
}

# OLM applies its own Upgradeable rule after approval, so for OperatorNotUpgradeable and
# OperatorConditionStale the remedy that lifts the hold is the OperatorCondition's own override,
# which Tollgate reads first as OLM does: with it in place, neither denial stands.
test_the_operator_condition_override_offered_lifts_the_hold if {
	every doc in [
		_oc(1, [], [], [f.upgradeable("False", "migrating", 1)]),
		_oc(3, [], [], [f.upgradeable("False", "migrating", 2)]),
		_oc(2, [], [f.cond("Upgradeable", "False", "M", "m", "2026-11-22T09:00:00Z")], []),
	] {
		some d in _deny(doc)
		d.code in {"OperatorNotUpgradeable", "OperatorConditionStale"}
		_olm_override in d.lift
		overridden := object.union(doc, {"operatorCondition": {"spec": {"overrides": [_override("Upgradeable", "True", "verified")]}}})
		_codes(overridden) == set()
	}
}

test_an_operator_condition_with_an_unsafe_name_offers_the_override_without_a_command if {
	doc := object.union(_oc(1, [], [], [f.upgradeable("False", "m", 1)]), {"operatorCondition": {"metadata": {"name": "Bad Name"}}})
	_one(doc, "OperatorNotUpgradeable").lift[1] == {"text": "or an admin overrides Upgradeable for OLM and Tollgate alike in spec.overrides of OperatorCondition operators/Bad Name (an UpgradeGate waiver would not do: OLM checks Upgradeable itself after approval)"}
}

test_upgrading_from_status_waits_for_the_operator if {
	d := _one(_oc(1, [], [], [f.cond("Upgrading", "True", "Migrating", "migrating to v2", "2026-11-22T09:00:00Z")]), "OperatorUpgrading")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: Upgrading=True since 2026-11-22T09:00:00Z: migrating to v2 (reason Migrating)"]
	d.lift == [{"text": "the operator reports Upgrading=False in OperatorCondition operators/etcdoperator.v0.9.2 when its own upgrade work is done"}]
}

test_upgrading_from_an_override_is_lifted_by_editing_the_operator_condition if {
	d := _one(_oc(1, [_override("Upgrading", "True", "")], [], [f.cond("Upgrading", "False", "Done", "", "2026-11-22T09:00:00Z")]), "OperatorUpgrading")
	d.facts == ["OperatorCondition etcdoperator.v0.9.2: spec.overrides sets Upgrading=True (an admin override): reason AdminOverride"]
	d.lift == [{
		"text": "an admin removes the Upgrading override from spec.overrides of OperatorCondition operators/etcdoperator.v0.9.2, or sets its status to False:",
		"command": _oc_edit,
	}]
}

test_an_operator_condition_with_an_unsafe_name_offers_no_command if {
	doc := object.union(_oc(1, [_override("Upgradeable", "False", "x")], [], []), {"operatorCondition": {"metadata": {"name": "Bad Name"}}})
	_one(doc, "OperatorNotUpgradeable").lift == [{"text": "an admin removes the Upgradeable override from spec.overrides of OperatorCondition operators/Bad Name, or sets its status to True"}]
}

test_degraded_names_every_degraded_operand if {
	doc := f.with_patch({"operands": [
		f.operand("a", [f.cond("Degraded", "True", "HealFailed", "1 of 3 members down", "2026-11-22T09:00:00Z")]),
		f.operand("b", [f.cond("Degraded", "False", "HealSucceeded", "", "2026-11-22T09:00:00Z")]),
		f.operand("c", [f.cond("Degraded", "True", "", "", ""), f.cond("Degraded", "False", "HealSucceeded", "", "")]),
		f.operand("d", [f.cond("Degraded", "False", "HealSucceeded", "", ""), f.cond("Degraded", "True", "HealFailed", "", "")]),
	]})
	d := _one(doc, "OperatorDegraded")
	d.facts == [
		"EtcdCluster operators/a: Degraded=True since 2026-11-22T09:00:00Z: 1 of 3 members down (reason HealFailed)",
		"EtcdCluster operators/c: Degraded=True: no message",
	]
	d.lift == [{"text": "the operands must report Degraded=False: fix EtcdCluster operators/a, EtcdCluster operators/c, or wait until they heal"}]
}

test_progressing_names_the_busy_operands if {
	doc := f.with_patch({"operands": [f.operand("example", [f.cond("Progressing", "True", "HealInProgress", "replacing member", "2026-11-22T09:00:00Z")])]})
	d := _one(doc, "OperatorProgressing")
	d.facts == ["EtcdCluster operators/example: Progressing=True since 2026-11-22T09:00:00Z: replacing member (reason HealInProgress)"]
	d.lift == [{"text": "wait until the operands finish their work and report Progressing=False (EtcdCluster operators/example)"}]
}

test_a_missing_catalog_is_created_or_the_subscription_repointed if {
	d := _one(f.with_patch({"sourceCatalog": null}), "CatalogSourceUnhealthy")
	d.facts == ["CatalogSource olm/operatorhubio does not exist"]
	d.lift == [{"text": "create the CatalogSource olm/operatorhubio, or point the Subscription at an existing catalog:", "command": _repoint}]
}

test_a_catalog_that_is_not_ready_states_its_connection if {
	cs := object.union(f.catalog("olm", "operatorhubio", "TRANSIENT_FAILURE"), {"status": {"connectionState": {
		"lastConnect": "2026-11-22T07:00:00Z", "address": "operatorhubio.olm.svc:50051",
	}}})
	d := _one(f.with_patch({"sourceCatalog": cs}), "CatalogSourceUnhealthy")
	d.facts == ["CatalogSource olm/operatorhubio: connection TRANSIENT_FAILURE, last connected 2026-11-22T07:00:00Z, registry at operatorhubio.olm.svc:50051"]
	d.lift == [
		{"text": "OLM must reach the catalog's registry (status.connectionState.lastObservedState READY): check the catalog's registry pod or address"},
		{"text": "or point the Subscription at a healthy catalog:", "command": _repoint},
	]
}

test_a_catalog_without_connection_state_says_so if {
	d := _one(f.with_patch({"sourceCatalog": {"status": null}}), "CatalogSourceUnhealthy")
	d.facts == ["CatalogSource olm/operatorhubio has no status.connectionState yet"]
}

test_a_catalog_state_without_details_is_stated_alone if {
	d := _one(f.with_patch({"sourceCatalog": f.catalog("olm", "operatorhubio", "CONNECTING")}), "CatalogSourceUnhealthy")
	d.facts == ["CatalogSource olm/operatorhubio: connection CONNECTING"]
}

test_an_invalid_catalog_has_one_fact_per_violation_and_an_edit_command if {
	bad := object.union(f.catalog("olm", "operatorhubio", "READY"), {"spec": {"catalogImageSource": {"catalogImage": ""}, "image": "quay.io/x:1"}})
	d := _one(f.with_patch({"sourceCatalog": bad}), "CatalogSourceInvalid")
	count(d.facts) == 2
	every fact in d.facts {
		startswith(fact, "CatalogSource olm/operatorhubio: spec.")
	}
	d.facts[0] == "CatalogSource olm/operatorhubio: spec.catalogImageSource.catalogImage is required when spec.catalogImageSource is set: give an operator-registry image, e.g. quay.io/operatorhubio/catalog:latest"
	d.lift == [{"text": "fix the CatalogSource's spec as the facts say:", "command": "kubectl edit catalogsource -n olm operatorhubio"}]
}

test_a_catalog_olm_does_not_resolve_from_is_moved_or_repointed if {
	d := _one(_elsewhere, "CatalogSourceInvalid")
	d.facts == ["CatalogSource elsewhere/operatorhubio is in namespace elsewhere; OLM resolves this Subscription only from catalogs in its own namespace operators and in the global catalog namespace olm"]
	d.lift == [{"text": "move the catalog to namespace operators or olm, or point the Subscription at a catalog there:", "command": _repoint}]
}

test_a_missing_installed_csv_waits_for_olm if {
	d := _one(f.with_patch({"installedCSV": null}), "InstalledCSVMissing")
	d.facts == ["Subscription operators/etcd reports status.installedCSV etcdoperator.v0.9.2, but no ClusterServiceVersion etcdoperator.v0.9.2 exists in namespace operators"]
	d.lift == [{"text": "OLM settles: it reinstalls the CSV or updates the Subscription's status.installedCSV; if nothing changes, check that OLM's olm-operator and catalog-operator are running"}]
}

test_every_embedded_denial_has_facts_and_remedies if {
	doc := f.with_patch({
		"operatorCondition": f.operator_condition(3, [], [f.upgradeable("False", "m", 2), f.cond("Upgrading", "True", "M", "m", "2026-11-22T09:00:00Z")]),
		"sourceCatalog": null,
		"operands": [f.operand("x", [f.cond("Degraded", "True", "HealFailed", "", ""), f.cond("Progressing", "True", "HealInProgress", "", "")])],
		"installPlanPeers": [f.peer("other.v1", null, false, [])],
	})
	every d in _deny(doc) {
		count(d.facts) > 0
		count(d.lift) > 0
	}
}

# --- one name for one fact: a denial's code names the same fact as the condition that reports it
# (DESIGN.md). Each test runs the same inputs through the condition and the denials.

# _sub_condition is the Subscription condition of type t for doc.
_sub_condition(doc, t) := c if {
	conds := subscription.conditions with input as doc
	c := f.condition(conds, t)
}

# _health is the aggregated health condition of type t for doc.
_health(doc, t) := c if {
	conds := health.conditions with input as doc
	c := f.condition(conds, t)
}

_not_ready_source := f.with_patch({"sourceCatalog": f.catalog("olm", "operatorhubio", "TRANSIENT_FAILURE"), "catalogSources": [f.catalog("olm", "operatorhubio", "TRANSIENT_FAILURE")]})

# (with_patch merges objects, so the source catalog's status is replaced by null)
_unobserved_source := f.with_patch({"sourceCatalog": {"status": null}, "catalogSources": [f.catalog("olm", "operatorhubio", "")]})

_missing_source := f.with_patch({"sourceCatalog": null, "catalogSources": [f.catalog("operators", "private", "READY")]})

_other_catalog_unhealthy := f.with_patch({"catalogSources": [f.catalog("olm", "operatorhubio", "READY"), f.catalog("operators", "private", "TRANSIENT_FAILURE")]})

_invalid_source := f.with_patch({
	"sourceCatalog": object.union(f.catalog("olm", "operatorhubio", "READY"), {"spec": {"sourceType": "grpc"}}),
	"catalogSources": [],
})

# CatalogSourceUnhealthy (the source catalog) and CatalogSourcesUnhealthy (every visible catalog
# and the source): the denial stands exactly when the condition reports the source catalog as
# missing, not READY or of unknown health, and then the condition is not False and names it. A
# missing source catalog was CatalogSourceInvalid=True before: it is unhealthy, not invalid.
test_catalog_source_unhealthy_agrees_with_the_catalog_sources_unhealthy_condition if {
	every doc in [f.base, _missing_source, _not_ready_source, _unobserved_source, _other_catalog_unhealthy, _invalid_source] {
		c := _sub_condition(doc, "CatalogSourcesUnhealthy")
		source_unhealthy := _source_unhealthy_in(doc, c)
		denied := "CatalogSourceUnhealthy" in _codes(doc)
		denied == source_unhealthy
		_names_the_source_when(source_unhealthy, c)
	}
	_sub_condition(_missing_source, "CatalogSourcesUnhealthy").reason == "CatalogSourceNotFound"
	_sub_condition(_missing_source, "CatalogSourceInvalid").status == "Unknown"
}

# _source_unhealthy_in holds when condition c (with catalogStatus) reports the source catalog as
# missing or not healthy.
_source_unhealthy_in(_, c) if c.reason == "CatalogSourceNotFound"

_source_unhealthy_in(doc, _) if {
	some st in subscription.catalog_status with input as doc
	st.source
	st.healthy != "True"
}

default _source_unhealthy_in(_, _) := false

_names_the_source_when(false, _)

_names_the_source_when(true, c) if {
	c.status in {"True", "Unknown"}
	contains(c.message, "olm/operatorhubio")
}

# CatalogSourceInvalid, the denial and the condition (the source catalog only).
test_catalog_source_invalid_agrees_with_the_catalog_source_invalid_condition if {
	both := object.union(_invalid_source, {"subscription": {"spec": {"sourceNamespace": "elsewhere"}}, "sourceCatalog": {"metadata": {"namespace": "elsewhere"}}})
	every doc in [f.base, _elsewhere, _invalid_source, both, _missing_source, _other_catalog_unhealthy, f.first_install] {
		_agree(doc, "CatalogSourceInvalid", _sub_condition(doc, "CatalogSourceInvalid").status)
	}
}

# _agree holds when doc has a denial of code exactly when the condition that reports the same
# fact has status True.
_agree(doc, code, status) if {
	denied := code in _codes(doc)
	reported := status == "True"
	denied == reported
}

# InstalledCSVMissing, the denial and the condition.
test_installed_csv_missing_agrees_with_the_installed_csv_missing_condition if {
	every doc in [f.base, f.with_patch({"installedCSV": null}), f.first_install, f.at_latest] {
		_agree(doc, "InstalledCSVMissing", _sub_condition(doc, "InstalledCSVMissing").status)
	}
}

_operands(conditions) := f.with_patch({"operands": [f.operand("a", conditions), f.operand("b", f.healthy_conditions("2026-11-21T08:00:00Z"))]})

_health_docs := [
	f.base,
	_operands([f.cond("Degraded", "True", "HealFailed", "down", "2026-11-22T09:00:00Z")]),
	_operands([f.cond("Progressing", "True", "HealInProgress", "busy", "2026-11-22T09:00:00Z")]),
	_operands([f.cond("Degraded", "Unknown", "HealInProgress", "", ""), f.cond("Progressing", "Unknown", "HealInProgress", "", "")]),
	_operands([]),
	f.with_patch({"operands": []}),
	f.first_install,
]

# OperatorDegraded and the aggregated health condition Degraded.
test_operator_degraded_agrees_with_the_degraded_health_condition if {
	every doc in _health_docs {
		_agree(doc, "OperatorDegraded", _health(doc, "Degraded").status)
	}
}

# OperatorProgressing and the aggregated health condition Progressing.
test_operator_progressing_agrees_with_the_progressing_health_condition if {
	every doc in _health_docs {
		_agree(doc, "OperatorProgressing", _health(doc, "Progressing").status)
	}
}

# The OperatorCondition denials name the OperatorCondition's own condition, which their facts
# quote: [input, the one code it denies with (or none), the condition type the fact states].
_oc_cases := [
	[f.base, set(), ""],
	[_oc(1, [], [], [f.upgradeable("False", "migrating", 1)]), {"OperatorNotUpgradeable"}, "Upgradeable=False"],
	[_oc(1, [_override("Upgradeable", "False", "audit")], [], [f.upgradeable("True", "ready", 1)]), {"OperatorNotUpgradeable"}, "Upgradeable=False"],
	[_oc(1, [_override("Upgradeable", "True", "verified")], [], [f.upgradeable("False", "migrating", 1)]), set(), ""],
	[_oc(3, [], [], [f.upgradeable("True", "ready", 2)]), {"OperatorConditionStale"}, "observed at generation 2"],
	[_oc(2, [], [f.cond("Upgradeable", "False", "M", "m", "2026-11-22T09:00:00Z")], []), {"OperatorConditionStale"}, "status.conditions has no Upgradeable yet"],
	[_oc(1, [], [], [f.cond("Upgrading", "True", "M", "migrating", "2026-11-22T09:00:00Z")]), {"OperatorUpgrading"}, "Upgrading=True"],
	[_oc(1, [_override("Upgrading", "True", "hold")], [], []), {"OperatorUpgrading"}, "Upgrading=True"],
]

_oc_codes := {"OperatorNotUpgradeable", "OperatorConditionStale", "OperatorUpgrading"}

_oc_agree(code) if {
	every case in _oc_cases {
		[doc, want, stated] := case
		denied := code in _codes(doc)
		wanted := code in want
		denied == wanted
		every d in _deny(doc) {
			_states(d, code, stated)
		}
	}
}

_states(d, code, _) if d.code != code

_states(d, code, stated) if {
	d.code == code
	contains(d.facts[0], "OperatorCondition etcdoperator.v0.9.2")
	contains(d.facts[0], stated)
}

test_operator_not_upgradeable_agrees_with_the_operator_conditions_upgradeable if _oc_agree("OperatorNotUpgradeable")

test_operator_condition_stale_agrees_with_the_operator_conditions_observed_generation if _oc_agree("OperatorConditionStale")

test_operator_upgrading_agrees_with_the_operator_conditions_upgrading if _oc_agree("OperatorUpgrading")

test_each_operator_condition_case_denies_with_one_code_at_most if {
	every case in _oc_cases {
		count(_codes(case[0]) & _oc_codes) <= 1
	}
}

# --- a recreated Subscription: no installed CSV reported, the plan replaces one that still runs

# _recreated is first_install whose plan replaces etcdoperator.v0.9.2, which still runs and has
# an OperatorCondition and operands (the builder reads them as the replaced CSV's).
_recreated(oc, operands) := f.with_patch({
	"subscription": {"status": {"installedCSV": "", "currentCSV": "etcdoperator.v0.9.4"}},
	"installedCSV": null,
	"replacedCSV": f.csv("etcdoperator.v0.9.2", "Succeeded"),
	"operatorCondition": oc,
	"operands": operands,
})

test_a_recreated_subscription_is_held_by_the_replaced_operators_upgradeable_false if {
	doc := _recreated(f.operator_condition(1, [], [f.upgradeable("False", "migrating storage", 1)]), [])
	_codes(doc) == {"OperatorNotUpgradeable"}
	startswith(_message(doc, "OperatorNotUpgradeable"), "etcdoperator.v0.9.2 reports Upgradeable=False")
}

test_a_recreated_subscription_is_held_by_the_replaced_operators_degraded_operand if {
	degraded := f.operand("example", [f.cond("Degraded", "True", "HealFailed", "lost quorum", "2026-11-21T09:00:00Z")])
	doc := _recreated(null, [degraded])
	"OperatorDegraded" in _codes(doc)
}

test_a_recreated_subscription_with_a_healthy_replaced_operator_is_allowed if {
	_codes(_recreated(f.operator_condition(1, [], [f.upgradeable("True", "ready", 1)]), [])) == set()
}

# --- OperatorGroups

_group(name, targets) := {
	"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
	"metadata": {"namespace": f.namespace, "name": name},
	"status": {"namespaces": targets},
}

test_one_operator_group_does_not_deny if _codes(f.with_patch({"operatorGroups": [f.base.operatorGroup]})) == set()

test_a_second_operator_group_denies if {
	doc := f.with_patch({"operatorGroup": null, "operatorGroups": [_group("a-decoy", ["elsewhere"]), f.base.operatorGroup]})
	_codes(doc) == {"TooManyOperatorGroups"}
	d := _one(doc, "TooManyOperatorGroups")
	contains(d.message, "holds 2 OperatorGroups (a-decoy, operators)")
	d.lift[0].command == "kubectl get operatorgroups -n operators"
	count(d.facts) == 2
}

# A plan's move from a CSV up the replacement chain is judged on that CSV's own OperatorCondition:
# OLM deletes the whole chain once the new CSV succeeds, so the operator that actually runs
# (etcdoperator.v0.9.0, Replacing) saying Upgradeable=False holds the move, even when the
# installed CSV's OperatorCondition says nothing.
test_a_move_up_the_chain_reads_its_from_operator_condition if {
	from_oc := object.union(
		f.operator_condition(1, [], [f.upgradeable("False", "migrating storage", 1)]),
		{"metadata": {"name": "etcdoperator.v0.9.0"}},
	)
	doc := f.with_patch({"move": {
		"namespace": "demo", "installPlan": "install-x",
		"from": {"name": "etcdoperator.v0.9.0", "package": "etcd", "version": "0.9.0", "versionFrom": "x", "phase": "Replacing", "operatorCondition": from_oc, "owner": null},
		"to": {"name": "etcdoperator.v0.9.4", "package": "etcd", "version": "0.9.4", "versionFrom": "x", "channel": "", "catalog": {"namespace": "", "name": ""}},
	}})
	_message(doc, "OperatorNotUpgradeable") == "etcdoperator.v0.9.0 reports Upgradeable=False: migrating storage"
}

# A move that states no from end leaves the document's own OperatorCondition in force (fail
# closed: the installed CSV may be missing while its OperatorCondition still speaks).
test_a_move_without_from_keeps_the_document_operator_condition if {
	doc := f.with_patch({
		"operatorCondition": f.operator_condition(1, [], [f.upgradeable("False", "m", 1)]),
		"move": {"namespace": "demo", "installPlan": null, "from": null, "to": {"name": "etcdoperator.v0.9.4"}},
	})
	"OperatorNotUpgradeable" in _codes(doc)
}
