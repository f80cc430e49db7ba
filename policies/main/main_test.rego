package tollgate.main_test

import data.tollgate.fixtures_test as f
import data.tollgate.main

_result(doc) := r if {
	r := main.result with input as doc with data.tollgate.packs as _packs(doc)
}

# _packs are the policy packs main's tests see: only the test-only fixture pack. Loaded with the
# shipped packs (`opa test policies bundles/packs/*`), main's tests stay hermetic: the packs'
# defaults (a soak time, a hold on major versions) would deny, and report times, for f.base.
_packs(doc) := {"fixture_test": {"deny": deny}} if {
	deny := data.tollgate.packs.fixture_test.deny with input as doc
}

_blocked(r) := f.condition(r.conditions, "UpgradeBlocked")

# base, with the operator reporting Upgradeable=False
_not_upgradeable := f.with_patch({"operatorCondition": f.operator_condition(1, [], [f.upgradeable("False", "migrating storage", 1)])})

_with_overrides(doc, overrides) := object.union(doc, {"gate": {"spec": {"overrides": overrides}}})

# _waiver is the remedy main appends to a standing denial that an override can lift.
_waiver(code) := {
	"text": "or an admin waives it for this Subscription, with a reason (add \"expires\" to make it temporary):",
	"override": code,
}

_default_remedy := {"text": "the condition this rule checks must stop holding (see the rule and its policy pack's configuration)"}

# _custom is the result for base with one denial d from an admin's package tollgate.custom.
_custom(d) := r.decision.denials[0] if {
	r := main.result with input as f.base with data.tollgate.custom.deny as {d} with data.tollgate.packs as {}
}

# --- shape

test_result_has_exactly_the_contract_keys if {
	object.keys(_result(f.base)) == {"conditions", "health", "state", "upToDate", "catalogStatus", "catalogValidation", "decision", "recheckAt"}
	object.keys(_result(f.base).decision) == {"allowed", "denials"}
}

test_conditions_are_the_ten_types_then_upgrade_blocked if {
	types := [c.type | some c in _result(f.base).conditions]
	count(types) == 11
	types[10] == "UpgradeBlocked"
}

test_parts_come_from_their_packages if {
	r := _result(f.base)
	r.state == "UpgradePending"
	r.upToDate == false
	[c.type | some c in r.health] == ["Available", "Progressing", "Degraded"]
	[c.name | some c in r.catalogStatus] == ["operatorhubio", "private"]
	[c.valid | some c in r.catalogValidation] == [true, true]
}

# --- decision

test_allowed_without_denials if {
	r := _result(f.base)
	r.decision == {"allowed": true, "denials": []}
	b := _blocked(r)
	b.status == "False"
	b.reason == "UpgradeAllowed"
	b.message == "no denial stands; mode Enforce: Tollgate approves the waiting InstallPlan"
}

test_a_denial_blocks if {
	r := _result(_not_upgradeable)
	r.decision.allowed == false
	r.decision.denials == [{
		"code": "OperatorNotUpgradeable",
		"title": "The installed operator reports Upgradeable=False",
		"message": "etcdoperator.v0.9.2 reports Upgradeable=False: migrating storage",
		"overridden": false,
		"package": "tollgate.upgrade",
		"facts": ["OperatorCondition etcdoperator.v0.9.2: Upgradeable=False since 2026-11-22T09:00:00Z: migrating storage (reason Test)"],
		"lift": [
			{"text": "the operator reports Upgradeable=True (or removes the condition) in OperatorCondition operators/etcdoperator.v0.9.2 once it is safe to upgrade; OLM copies spec.conditions to status.conditions"},
			{
				"text": "or an admin overrides Upgradeable for OLM and Tollgate alike in spec.overrides of OperatorCondition operators/etcdoperator.v0.9.2 (an UpgradeGate waiver would not do: OLM checks Upgradeable itself after approval):",
				"command": "kubectl edit operatorcondition -n operators etcdoperator.v0.9.2",
			},
		],
	}]
	b := _blocked(r)
	b.status == "True"
	b.reason == "OperatorNotUpgradeable"
	b.message == "1 denials stand (OperatorNotUpgradeable); first: etcdoperator.v0.9.2 reports Upgradeable=False: migrating storage"
}

test_a_document_without_a_required_object_key_has_no_result if {
	every key in object.keys(f.base) - {"apiVersion", "now"} {
		not main.result with input as object.remove(f.base, {key})
	}
	main.result with input as object.union(f.base, {"installedCSV": null, "installPlan": null, "packageManifest": null, "gate": null})
}

test_allowed_defaults_to_false if {
	not main.allowed with main.standing as [{"code": "X"}]
}

# --- overrides

test_an_override_without_expiry_waives_the_denial if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "DBA verified the migration"}]))
	r.decision.allowed == true
	d := r.decision.denials[0]
	d.overridden == true
	d.overrideReason == "DBA verified the migration"
	_blocked(r).status == "False"
}

test_an_override_before_expiry_waives_the_denial if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-23T00:00:00Z"}]))
	r.decision.allowed == true
	r.decision.denials[0].overridden == true
}

test_an_expired_override_is_ignored_and_reported if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-22T09:59:59Z"}]))
	r.decision.allowed == false
	d := r.decision.denials[0]
	d.overridden == false
	not d.overrideReason
	d.message == "etcdoperator.v0.9.2 reports Upgradeable=False: migrating storage (override expired at 2026-11-22T09:59:59Z: ok)"
}

test_an_override_expiring_now_is_expired if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": f.now}]))
	r.decision.allowed == false
}

test_an_unparseable_expiry_is_expired if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "tomorrow"}]))
	r.decision.allowed == false
}

test_an_override_of_another_code_does_not_waive if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorDegraded", "reason": "ok"}]))
	r.decision.allowed == false
}

test_overrides_need_a_gate if {
	r := _result(object.union(_not_upgradeable, {"gate": null}))
	r.decision.allowed == false
}

# --- disabled codes

test_disabled_codes_are_dropped if {
	r := main.result with input as _not_upgradeable with data.tollgate.config.disabledCodes as ["OperatorNotUpgradeable"] with data.tollgate.packs as {}
	r.decision == {"allowed": true, "denials": []}
}

test_policy_error_cannot_be_disabled_or_overridden if {
	doc := _with_overrides(object.union(f.base, {"apiVersion": "tollgate.dev/input/v0"}), [{"code": "PolicyError", "reason": "nope"}])
	r := main.result with input as doc with data.tollgate.config.disabledCodes as ["PolicyError"] with data.tollgate.packs as {}
	r.decision.allowed == false
	r.decision.denials[0].code == "PolicyError"
	r.decision.denials[0].overridden == false
}

# --- input version

test_an_unknown_input_version_fails_closed if {
	r := _result(object.union(f.base, {"apiVersion": "tollgate.dev/input/v2"}))
	r.decision.allowed == false
	d := r.decision.denials[0]
	d.code == "PolicyError"
	contains(d.message, `apiVersion "tollgate.dev/input/v2"`)
}

# --- denials from every package

test_a_pack_under_packs_adds_denials if {
	r := _result(f.with_patch({"subscription": {"metadata": {"name": "pack-fixture"}}}))
	r.decision.allowed == false
	r.decision.denials == [{
		"code": "FixtureHold", "title": "The fixture pack holds this Subscription", "message": "held by the fixture pack",
		"overridden": false, "package": "tollgate.packs.fixture_test",
		"facts": [], "lift": [_default_remedy, _waiver("FixtureHold")],
	}]
}

test_a_denial_without_a_title_is_kept_without_one if {
	r := main.result with input as f.base with data.tollgate.custom.deny as {{"code": "Custom", "message": "m", "title": 7}} with data.tollgate.packs as {}
	r.decision.denials == [{"code": "Custom", "message": "m", "overridden": false, "package": "tollgate.custom", "facts": [], "lift": [_default_remedy, _waiver("Custom")]}]
}

test_the_input_version_denial_names_its_rule if {
	r := _result(object.union(f.base, {"apiVersion": "tollgate.dev/input/v2"}))
	r.decision.denials[0].title == "The input document has a version these policies do not understand"
}

# --- times that do not parse never raise a built-in error (which fails closed as PolicyError)

test_an_operand_with_an_empty_transition_time_is_still_allowed if {
	doc := f.with_patch({"operands": [f.operand("example", [
		f.cond("Available", "True", "HealSucceeded", "", ""),
		f.cond("Progressing", "False", "HealSucceeded", "", "not a time"),
		{"type": "Degraded", "status": "False", "reason": "HealSucceeded", "lastTransitionTime": null},
	])]})
	r := _result(doc)
	r.decision == {"allowed": true, "denials": []}
	[c.status | some c in r.health] == ["True", "False", "False"]
}

test_an_empty_override_expiry_counts_as_expired if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": ""}]))
	r.decision.allowed == false
	contains(r.decision.denials[0].message, "(override expired at : ok)")
}

test_a_top_level_package_adds_denials if {
	r := main.result with input as f.base with data.tollgate.custom.deny as {{"code": "Custom", "message": "m"}} with data.tollgate.packs as {}
	r.decision.denials == [{"code": "Custom", "message": "m", "overridden": false, "package": "tollgate.custom", "facts": [], "lift": [_default_remedy, _waiver("Custom")]}]
}

test_a_malformed_denial_is_a_policy_error if {
	r := _result(f.with_patch({"subscription": {"metadata": {"name": "pack-malformed"}}}))
	r.decision.allowed == false
	d := r.decision.denials[0]
	d.code == "PolicyError"
	contains(d.message, "package tollgate.packs.fixture_test produced a denial without a string code and message")
}

test_a_deny_that_is_not_a_set_is_a_policy_error if {
	r := main.result with input as f.base with data.tollgate.custom.deny as "hold everything" with data.tollgate.packs as {}
	r.decision.allowed == false
	d := r.decision.denials[0]
	d.code == "PolicyError"
	d.package == "tollgate.custom"
	contains(d.message, `package tollgate.custom defines deny as "hold everything", which is not a set of denials`)
	startswith(d.lift[0].text, "make deny in package tollgate.custom")
}

test_a_pack_deny_that_is_not_a_set_is_a_policy_error if {
	r := main.result with input as f.base with data.tollgate.packs as {"acme": {"deny": true}}
	r.decision.allowed == false
	d := r.decision.denials[0]
	d.code == "PolicyError"
	d.package == "tollgate.packs.acme"
	d.overridden == false
}

test_a_not_a_set_deny_cannot_be_overridden if {
	doc := _with_overrides(f.base, [{"code": "PolicyError", "reason": "nope"}])
	r := main.result with input as doc with data.tollgate.custom.deny as 7 with data.tollgate.packs as {}
	r.decision.allowed == false
	r.decision.denials[0].overridden == false
}

test_a_deny_given_as_an_array_or_object_is_still_collected if {
	a := main.result with input as f.base with data.tollgate.custom.deny as [{"code": "Custom", "message": "m"}] with data.tollgate.packs as {}
	a.decision.denials[0].code == "Custom"
	o := main.result with input as f.base with data.tollgate.custom.deny as {"x": {"code": "Custom", "message": "m"}} with data.tollgate.packs as {}
	o.decision.denials[0].code == "Custom"
}

test_a_pack_denial_can_be_overridden if {
	doc := _with_overrides(f.with_patch({"subscription": {"metadata": {"name": "pack-fixture"}}}), [{"code": "FixtureHold", "reason": "ok"}])
	_result(doc).decision.allowed == true
}

# --- sorting

test_denials_sort_standing_first_then_code_then_message if {
	doc := _with_overrides(
		f.with_patch({
			"operatorCondition": f.operator_condition(1, [], [f.upgradeable("False", "migrating", 1)]),
			"sourceCatalog": null,
			"installPlanPeers": [f.peer("b.v1", null, true, []), f.peer("a.v1", null, true, [])],
		}),
		[{"code": "CatalogSourceUnhealthy", "reason": "known"}],
	)
	r := _result(doc)
	ds := r.decision.denials
	[[d.overridden, d.code] | some d in ds] == [
		[false, "InstallPlanIncludesBlockedOperator"],
		[false, "InstallPlanIncludesBlockedOperator"],
		[false, "OperatorNotUpgradeable"],
		[true, "CatalogSourceUnhealthy"],
	]
	contains(ds[0].message, "installs a.v1")
	contains(ds[1].message, "installs b.v1")
}

# --- UpgradeBlocked

test_upgrade_blocked_false_when_nothing_waits if {
	b := _blocked(_result(object.union(f.at_latest, {"operatorCondition": f.operator_condition(1, [], [f.upgradeable("False", "m", 1)])})))
	b.status == "False"
	b.reason == "NoUpgradeWaiting"
}

test_upgrade_blocked_when_a_replacement_waits_without_a_plan if {
	doc := object.union(_not_upgradeable, {"installPlan": null, "pendingInstallPlans": [], "subscription": {"status": {"installPlanRef": null}}})
	b := _blocked(_result(doc))
	b.status == "True"
}

test_upgrade_blocked_reports_that_automatic_approval_cannot_be_held if {
	doc := object.union(_not_upgradeable, {"subscription": {"spec": {"installPlanApproval": "Automatic"}}, "installPlan": null, "pendingInstallPlans": []})
	b := _blocked(_result(doc))
	b.status == "False"
	b.reason == "AutomaticApproval"
	contains(b.message, "set spec.installPlanApproval to Manual")
}

test_upgrade_allowed_in_audit_mode_says_it_will_not_approve if {
	b := _blocked(_result(f.with_patch({"gate": {"spec": {"mode": "Audit"}}})))
	b.reason == "UpgradeAllowed"
	contains(b.message, "mode Audit: Tollgate reports the decision but never approves")
}

test_mode_defaults_to_the_manager_default if {
	b := _blocked(_result(object.union(f.base, {"gate": null, "config": {"defaultMode": "Audit"}})))
	contains(b.message, "mode Audit")
}

# --- facts and remedies

# base, with an operand that reports Degraded=True
_degraded := f.with_patch({"operands": [f.operand("example", [f.cond("Degraded", "True", "HealFailed", "1 of 3 members down", "2026-11-22T09:00:00Z")])]})

test_a_standing_denial_offers_the_override_last if {
	d := _result(_degraded).decision.denials[0]
	d.code == "OperatorDegraded"
	count(d.lift) == 2
	d.lift[1] == _waiver("OperatorDegraded")
}

# OLM checks Upgradeable itself after approval: a waiver of these would not lift the hold.
test_no_waiver_is_offered_where_olm_holds_the_upgrade_anyway if {
	every doc in [
		_not_upgradeable,
		f.with_patch({"operatorCondition": f.operator_condition(2, [], [f.upgradeable("True", "ready", 1)])}),
		_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-22T09:59:59Z"}]),
	] {
		[d] := _result(doc).decision.denials
		d.code in {"OperatorNotUpgradeable", "OperatorConditionStale"}
		d.overridden == false
		count(d.lift) > 0
		every remedy in d.lift {
			not remedy.override
		}
	}
}

test_an_overridden_denial_keeps_its_facts_adds_the_waiver_and_has_nothing_to_lift if {
	d := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "DBA verified the migration"}])).decision.denials[0]
	d.overridden == true
	d.facts == [
		"OperatorCondition etcdoperator.v0.9.2: Upgradeable=False since 2026-11-22T09:00:00Z: migrating storage (reason Test)",
		"waived by the UpgradeGate override: DBA verified the migration",
	]
	d.lift == []
}

test_the_waiver_fact_names_the_expiry if {
	d := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-23T00:00:00Z"}])).decision.denials[0]
	d.facts[1] == "waived by the UpgradeGate override: ok (expires 2026-11-23T00:00:00Z)"
}

test_an_expired_override_is_offered_again if {
	d := _result(_with_overrides(_degraded, [{"code": "OperatorDegraded", "reason": "ok", "expires": "2026-11-22T09:59:59Z"}])).decision.denials[0]
	d.overridden == false
	d.lift[count(d.lift) - 1] == _waiver("OperatorDegraded")
}

test_a_rule_without_remedies_gets_the_default_one_then_the_override if {
	d := _custom({"code": "Custom", "message": "m", "facts": ["f"], "lift": []})
	d.facts == ["f"]
	d.lift == [_default_remedy, _waiver("Custom")]
}

test_well_formed_facts_and_remedies_are_kept if {
	lift := [
		{"text": "do this:", "command": "kubectl get pods"},
		{"text": "lift what holds demo/prometheus:", "subscription": {"namespace": "demo", "name": "prometheus"}},
	]
	d := _custom({"code": "Custom", "message": "m", "facts": ["one", "two"], "lift": lift})
	d.facts == ["one", "two"]
	d.lift == array.concat(lift, [_waiver("Custom")])
}

test_malformed_facts_from_an_admin_rule_are_dropped if {
	every facts in ["one fact", ["one", 2], {"a": "b"}, null] {
		d := _custom({"code": "Custom", "message": "m", "facts": facts})
		d.facts == []
		d.overridden == false
	}
}

test_malformed_lift_from_an_admin_rule_is_dropped_not_trusted if {
	every lift in [
		"do this",
		[{"text": "ok"}, "do that"],
		[{"command": "kubectl get pods"}],
		[{"text": ""}],
		[{"text": "ok", "command": 7}],
		[{"text": "ok", "override": ["Custom"]}],
		[{"text": "ok", "extra": "key"}],
		[{"text": "ok", "subscription": "demo/prometheus"}],
		[{"text": "ok", "subscription": {"namespace": "demo"}}],
		[{"text": "ok", "subscription": {"namespace": "demo", "name": "x; rm -rf /"}}],
		[{"text": "ok", "subscription": {"namespace": "demo", "name": "p", "uid": "1"}}],
	] {
		d := _custom({"code": "Custom", "message": "m", "lift": lift})
		d.lift == [_default_remedy, _waiver("Custom")]
	}
}

test_a_rule_cannot_offer_an_override_itself if {
	d := _custom({"code": "Custom", "message": "m", "lift": [{"text": "ok"}, {"text": "waive:", "override": "PolicyError"}]})
	d.lift == [{"text": "ok"}, _waiver("Custom")]
	e := _custom({"code": "Custom", "message": "m", "lift": [{"text": "waive:", "override": "Custom"}]})
	e.lift == [_default_remedy, _waiver("Custom")]
}

test_a_policy_error_never_offers_an_override if {
	doc := _with_overrides(object.union(f.base, {"apiVersion": "tollgate.dev/input/v2"}), [{"code": "PolicyError", "reason": "nope"}])
	d := _result(doc).decision.denials[0]
	d.code == "PolicyError"
	d.overridden == false
	d.facts == [
		`the input document has apiVersion "tollgate.dev/input/v2"; these policies understand "tollgate.dev/input/v1"`,
		"the policies could not decide, so nothing is approved (fail closed)",
		"the UpgradeGate override of PolicyError is ignored: PolicyError cannot be overridden",
	]
	d.lift == [{
		"text": "run the policies and the manager of the same Tollgate release (PolicyError cannot be overridden): upgrade the older one, or remove a policy ConfigMap that replaces an embedded policy file with an older copy:",
		"command": "kubectl get configmaps -A -l tollgate.dev/policy -o yaml",
	}]
}

test_a_malformed_denial_is_a_policy_error_that_says_how_to_fix_it if {
	d := _result(f.with_patch({"subscription": {"metadata": {"name": "pack-malformed"}}})).decision.denials[0]
	d.code == "PolicyError"
	d.facts == [
		`package tollgate.packs.fixture_test produced {"reason": "no code"}, which is not a denial: a denial is an object with a non-empty string code and a string message`,
		"the policies could not decide, so nothing is approved (fail closed)",
	]
	count(d.lift) == 1
	startswith(d.lift[0].text, "fix the deny rules of package tollgate.packs.fixture_test")
	not d.lift[0].override
}

test_a_policy_error_from_a_pack_is_not_overridable_either if {
	doc := _with_overrides(f.base, [{"code": "PolicyError", "reason": "nope"}])
	r := main.result with input as doc with data.tollgate.custom.deny as {{"code": "PolicyError", "message": "m"}} with data.tollgate.packs as {}
	d := r.decision.denials[0]
	d.overridden == false
	d.lift == [_default_remedy]
}

_blocked_peer := f.with_patch({"installPlanPeers": [f.peer("prometheus.v2", {"namespace": "demo", "name": "prometheus"}, false, ["OperatorDegraded"])]})

test_install_plan_includes_blocked_operator_is_never_overridden if {
	r := _result(_with_overrides(_blocked_peer, [{"code": "InstallPlanIncludesBlockedOperator", "reason": "I know"}]))
	r.decision.allowed == false
	d := r.decision.denials[0]
	d.code == "InstallPlanIncludesBlockedOperator"
	d.overridden == false
	not d.overrideReason
	d.facts[1] == "the UpgradeGate override of InstallPlanIncludesBlockedOperator is ignored: InstallPlanIncludesBlockedOperator cannot be overridden"
}

test_install_plan_includes_blocked_operator_offers_the_peers_subscription_not_an_override if {
	d := _result(_blocked_peer).decision.denials[0]
	d.lift == [{
		"text": "lift what holds demo/prometheus (its own explanation says how):",
		"subscription": {"namespace": "demo", "name": "prometheus"},
	}]
}

test_upgrade_blocked_when_a_policy_denies_without_a_denial if {
	b := _blocked(main.result) with input as f.base with main.allowed as false with data.tollgate.packs as {}
	b.status == "True"
	b.reason == "PolicyDenied"
}

# --- recheckAt: the next instant at which time alone could change the result

_ns(t) := time.parse_rfc3339_ns(t)

# _rechecking is the result for f.base with an admin's package reporting instants ts.
_rechecking(ts) := r if {
	r := main.result with input as f.base with data.tollgate.custom.recheck_at as ts with data.tollgate.packs as {}
}

test_recheck_at_is_null_when_nothing_depends_on_time if {
	_result(f.base).recheckAt == null
	_result(_not_upgradeable).recheckAt == null
}

test_recheck_at_is_the_expiry_of_an_override_that_waives_a_denial if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-23T00:00:00Z"}]))
	r.decision.allowed == true
	r.recheckAt == "2026-11-23T00:00:00Z"
}

test_recheck_at_is_written_in_utc if {
	r := _result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-23T02:30:00.5+02:00"}]))
	r.recheckAt == "2026-11-23T00:30:00.5Z"
}

test_an_override_without_expiry_or_expired_or_of_nothing_sets_no_recheck_at if {
	_result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok"}])).recheckAt == null
	_result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-22T09:00:00Z"}])).recheckAt == null
	_result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": f.now}])).recheckAt == null
	_result(_with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "tomorrow"}])).recheckAt == null
	_result(_with_overrides(f.base, [{"code": "OperatorDegraded", "reason": "ok", "expires": "2026-11-23T00:00:00Z"}])).recheckAt == null
}

test_an_override_of_a_code_that_cannot_be_overridden_sets_no_recheck_at if {
	doc := _with_overrides(object.union(f.base, {"apiVersion": "tollgate.dev/input/v0"}), [{"code": "PolicyError", "reason": "nope", "expires": "2026-11-23T00:00:00Z"}])
	_result(doc).recheckAt == null
}

test_any_package_reports_instants_and_the_earliest_future_one_wins if {
	_rechecking({_ns("2026-11-22T12:00:00Z"), "2026-11-22T11:00:00+00:00", _ns("2026-11-24T00:00:00Z")}).recheckAt == "2026-11-22T11:00:00Z"
	_rechecking([_ns("2026-11-22T12:00:00Z")]).recheckAt == "2026-11-22T12:00:00Z"
	_rechecking({"a": "2026-11-22T12:00:00Z"}).recheckAt == "2026-11-22T12:00:00Z"
}

test_a_pack_reports_instants_too if {
	r := main.result with input as f.base with data.tollgate.packs as {"acme": {"recheck_at": {_ns("2026-11-22T13:00:00Z")}}}
	r.recheckAt == "2026-11-22T13:00:00Z"
}

test_the_earliest_of_an_override_expiry_and_a_package_instant_wins if {
	doc := _with_overrides(_not_upgradeable, [{"code": "OperatorNotUpgradeable", "reason": "ok", "expires": "2026-11-23T00:00:00Z"}])
	early := main.result with input as doc with data.tollgate.custom.recheck_at as {"2026-11-22T18:00:00Z"} with data.tollgate.packs as {}
	early.recheckAt == "2026-11-22T18:00:00Z"
	late := main.result with input as doc with data.tollgate.custom.recheck_at as {"2026-11-24T00:00:00Z"} with data.tollgate.packs as {}
	late.recheckAt == "2026-11-23T00:00:00Z"
}

test_instants_not_after_now_and_garbled_ones_are_ignored if {
	_rechecking({
		_ns("2026-11-22T09:00:00Z"), _ns(f.now), f.now, "2026-11-22T09:00:00Z",
		"tomorrow", "", true, null, {}, [], 1e30, "2262-01-01T00:00:00Z", "2300-01-01T00:00:00Z",
	}).recheckAt == null
	_rechecking("2026-11-23T00:00:00Z").recheckAt == null
	_rechecking(7).recheckAt == null
}

test_a_fractional_instant_is_rounded_up if {
	_rechecking({_ns("2026-11-22T12:00:00Z") - 0.5}).recheckAt == "2026-11-22T12:00:00Z"
}
