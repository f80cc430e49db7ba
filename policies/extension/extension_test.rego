package tollgate.extension_test

import data.tollgate.extension
import data.tollgate.fixtures_test as f
import data.tollgate.health
import data.tollgate.lib
import data.tollgate.main

# _result is main's result for doc, with only the packs a test gives (none by default), so the
# shipped packs' defaults never show here.
_result(doc) := r if {
	r := main.result with input as doc with data.tollgate.packs as {}
}

_decision(doc) := _result(doc).decision

_deny(doc) := ds if {
	ds := extension.deny with input as doc
}

_codes(doc) := f.codes(_deny(doc))

# _one is the only denial of doc with code.
_one(doc, code) := d if {
	ds := [d | some d in _decision(doc).denials; d.code == code]
	count(ds) == 1
	d := ds[0]
}

_blocked(r) := f.condition(r.conditions, "UpgradeBlocked")

_with_overrides(doc, overrides) := object.union(doc, {"gate": {"spec": {"overrides": overrides}}})

_deprecated := f.with_extension_patch({"candidate": {"deprecations": [
	{"schema": "olm.package", "name": "tollgate-demo", "message": "tollgate-demo is replaced by tollgate-next"},
	{"schema": "olm.bundle", "name": "tollgate-demo.v1.1.0", "message": "1.1.0 leaks memory"},
]}})

_unreadable := f.with_extension_patch({"catalogErrors": [{"catalog": "demo-catalog", "message": "GET https://catalogd/all: 503 \"unavailable\""}]})

_settled_but(t, c) := array.concat([x | some x in f.settled_conditions(2); x.type != t], [c])

# --- the document's kind

test_document_holds_for_the_extension_version_only if {
	extension.document with input as f.extension_input
	not extension.document with input as {"apiVersion": main.input_version}
	lib.extension_document with input as {"apiVersion": main.extension_input_version}
}

test_a_subscription_document_is_not_judged_here if {
	doc := f.with_patch({"now": "2026-11-22T10:00:01Z", "installedCSV": null, "operands": []})
	_deny(doc) == set()
	r := main.result with input as doc with data.tollgate.packs as {}
	count(r.conditions) == 11
	r.decision.denials[0].code == "InstalledCSVMissing"
	r.decision.denials[0].lift[1].text == "or an admin waives it for this Subscription, with a reason (add \"expires\" to make it temporary):"
}

test_an_extension_document_is_judged_by_this_package_the_packs_and_admin_packages if {
	doc := f.with_extension_patch({"installed": null})
	r := main.result with input as doc with data.tollgate.custom.deny as {{"code": "Custom", "message": "m"}} with data.tollgate.packs as {"p": {"deny": {{"code": "PackHold", "message": "held"}}}}
	{d.code | some d in r.decision.denials} == {"ExtensionNotInstalled", "PackHold", "Custom"}
	{d.package | some d in r.decision.denials} == {"tollgate.extension", "tollgate.packs.p", "tollgate.custom"}
}

test_the_subscription_denials_do_not_judge_an_extension if {
	doc := f.with_extension_patch({"installed": null})
	count(data.tollgate.upgrade.deny) == 0 with input as doc
}

test_a_malformed_extension_deny_is_a_policy_error if {
	r := main.result with input as f.extension_input with data.tollgate.extension.deny as "no" with data.tollgate.packs as {}
	r.decision.denials[0].code == "PolicyError"
	r.decision.denials[0].package == "tollgate.extension"
}

# --- result

test_result_has_the_contract_keys if {
	r := _result(f.extension_input)
	object.keys(r) == {"conditions", "health", "state", "upToDate", "catalogStatus", "catalogValidation", "decision", "recheckAt"}
	r.catalogStatus == []
	r.catalogValidation == []
	[c.type | some c in r.conditions] == ["CatalogsServing", "ExtensionInstalled", "UpgradeBlocked"]
	[c.type | some c in r.health] == ["Available", "Progressing", "Degraded"]
	r.recheckAt == null
}

test_a_missing_key_gives_no_result if {
	every key in ["extension", "catalogs", "catalogErrors", "installed", "candidate", "operands", "gate", "config"] {
		not _result(json.remove(f.extension_input, [key]))
	}
}

test_optional_keys_may_be_missing if {
	r := _result(json.remove(f.extension_input, ["unreadableOperandKinds"]))
	r.decision.allowed == true
}

test_the_subscription_result_is_not_defined_for_an_extension_document if {
	# an extension document that also carries every Subscription key is still an extension document
	doc := object.union(f.base, f.extension_input)
	r := _result(doc)
	[c.type | some c in r.conditions] == ["CatalogsServing", "ExtensionInstalled", "UpgradeBlocked"]
}

test_the_extension_version_is_no_policy_error if {
	not "PolicyError" in {d.code | some d in _decision(f.extension_input).denials}
}

# --- allowed successor

test_an_allowed_successor if {
	r := _result(f.extension_input)
	r.decision == {"allowed": true, "denials": []}
	r.state == "UpgradeAvailable"
	r.upToDate == false
	_blocked(r) == {
		"type": "UpgradeBlocked", "status": "False", "reason": "UpgradeAllowed",
		"message": "no denial stands; mode Enforce: Tollgate moves spec.source.catalog.version to 1.1.0",
	}
	f.condition(r.conditions, "CatalogsServing").status == "True"
	f.condition(r.conditions, "ExtensionInstalled") == {
		"type": "ExtensionInstalled", "status": "True", "reason": "Installed",
		"message": "tollgate-demo.v1.0.0 is installed at version 1.0.0",
	}
	f.condition(r.health, "Available").status == "True"
}

test_audit_mode_only_reports if {
	r := _result(f.with_extension_patch({"gate": {"spec": {"mode": "Audit"}}}))
	_blocked(r).message == "no denial stands; mode Audit: Tollgate reports the decision but never moves spec.source.catalog.version to 1.1.0"
}

test_no_candidate_has_nothing_to_allow if {
	r := _result(f.with_extension_patch({"candidate": null}))
	r.state == "AtLatestKnown"
	r.upToDate == true
	b := _blocked(r)
	b.status == "False"
	b.reason == "NoUpgradeWaiting"
}

test_no_candidate_still_reports_denials if {
	r := _result(f.with_extension_patch({"candidate": null, "catalogs": [f.cluster_catalog("demo-catalog", "False")]}))
	r.decision.allowed == false
	_blocked(r).reason == "NoUpgradeWaiting"
}

test_a_denial_blocks_the_candidate if {
	r := _result(_deprecated)
	b := _blocked(r)
	b.status == "True"
	b.reason == "BundleDeprecated"
	startswith(b.message, "1 denials stand (BundleDeprecated); first: the successor tollgate-demo.v1.1.0")
}

test_policy_denied_without_a_denial if {
	r := main.result with input as f.extension_input with data.tollgate.packs as {} with main.allowed as false
	_blocked(r).reason == "PolicyDenied"
}

test_recheck_at_is_an_override_expiry if {
	r := _result(_with_overrides(_deprecated, [{"code": "BundleDeprecated", "reason": "known", "expires": "2026-11-23T00:00:00Z"}]))
	r.decision.allowed == true
	r.recheckAt == "2026-11-23T00:00:00Z"
}

test_extension_recheck_at_is_collected if {
	r := main.result with input as f.extension_input with data.tollgate.packs as {} with data.tollgate.extension.recheck_at as {"2026-11-22T11:00:00Z"}
	r.recheckAt == "2026-11-22T11:00:00Z"
}

test_disabled_codes_apply if {
	r := main.result with input as _deprecated with data.tollgate.packs as {} with data.tollgate.config.disabledCodes as ["BundleDeprecated"]
	r.decision.allowed == true
}

# --- catalogs

test_a_catalog_that_is_not_serving if {
	doc := f.with_extension_patch({"catalogs": [f.cluster_catalog("demo-catalog", "True"), f.cluster_catalog("stale", "False")]})
	_codes(doc) == {"CatalogNotServing"}
	d := _one(doc, "CatalogNotServing")
	d.message == "ClusterCatalog stale, which ClusterExtension tollgate-demo selects, is not serving (Serving=False: reason Unavailable): OLM v1 cannot resolve from it, and Tollgate cannot read which bundles it offers"
	d.facts == ["ClusterCatalog stale: Serving=False since 2026-11-21T08:00:00Z: reason Unavailable"]
	d.lift == [
		{"text": "catalogd serves the catalog (Serving=True) once it has unpacked its image; check the catalog's conditions:", "command": "kubectl get clustercatalog stale -o yaml"},
		{"text": "or an admin changes spec.source.catalog.selector of ClusterExtension tollgate-demo so that it no longer selects the catalog (OLM v1 reads every catalog it selects):", "command": "kubectl edit clusterextension tollgate-demo"},
	]
	c := f.condition(_result(doc).conditions, "CatalogsServing")
	c.status == "False"
	c.message == "not serving, or not readable: stale"
}

test_a_catalog_without_a_serving_condition_is_not_serving if {
	doc := f.with_extension_patch({"catalogs": [f.cluster_catalog("new", "")], "catalogErrors": [{"catalog": "new", "message": "not Serving"}]})
	_codes(doc) == {"CatalogNotServing"}
	d := _one(doc, "CatalogNotServing")
	d.facts == ["ClusterCatalog new has no Serving condition yet", "Tollgate could not read the content of ClusterCatalog new: not Serving"]
	contains(d.message, "(no Serving condition yet)")
}

test_an_unreadable_catalog if {
	_codes(_unreadable) == {"CatalogUnreadable"}
	d := _one(_unreadable, "CatalogUnreadable")
	d.message == "the content of ClusterCatalog demo-catalog, which ClusterExtension tollgate-demo selects, could not be read, so the successors were not decided on all of it: GET https://catalogd/all: 503 \"unavailable\""
	d.lift[0].command == "kubectl get clustercatalog demo-catalog -o yaml"
	d.overridden == false
	count(d.lift) == 2
}

test_an_unreadable_catalog_cannot_be_overridden if {
	d := _one(_with_overrides(_unreadable, [{"code": "CatalogUnreadable", "reason": "trust me"}]), "CatalogUnreadable")
	d.overridden == false
	d.facts[1] == "the ExtensionGate override of CatalogUnreadable is ignored: CatalogUnreadable cannot be overridden"
	_decision(_with_overrides(_unreadable, [{"code": "CatalogUnreadable", "reason": "trust me"}])).allowed == false
}

test_an_unreadable_catalog_name_that_is_no_plain_name_gets_no_command if {
	d := _one(f.with_extension_patch({"catalogErrors": [{"catalog": "a b", "message": 5}]}), "CatalogUnreadable")
	d.lift[0] == {"text": "catalogd serves the catalog's content at status.urls.base; check the catalog's status and that Tollgate reaches catalogd"}
	endswith(d.message, "could not be read, so the successors were not decided on all of it: 5")
}

test_no_catalog_selected if {
	c := f.condition(_result(f.with_extension_patch({"catalogs": [], "candidate": null})).conditions, "CatalogsServing")
	c.reason == "NoCatalogSelected"
}

# --- the candidate

test_a_deprecated_candidate if {
	_codes(_deprecated) == {"BundleDeprecated"}
	d := _one(_deprecated, "BundleDeprecated")
	d.facts == [
		"ClusterCatalog demo-catalog deprecates package tollgate-demo: tollgate-demo is replaced by tollgate-next",
		"ClusterCatalog demo-catalog deprecates bundle tollgate-demo.v1.1.0: 1.1.0 leaks memory",
	]
	d.message == "the successor tollgate-demo.v1.1.0 (version 1.1.0) of ClusterExtension tollgate-demo is deprecated: ClusterCatalog demo-catalog deprecates package tollgate-demo: tollgate-demo is replaced by tollgate-next; ClusterCatalog demo-catalog deprecates bundle tollgate-demo.v1.1.0: 1.1.0 leaks memory"
	d.lift[1] == {
		"text": "or an admin waives it for this ClusterExtension, with a reason (add \"expires\" to make it temporary):",
		"override": "BundleDeprecated",
	}
}

test_a_deprecated_candidate_can_be_overridden if {
	r := _result(_with_overrides(_deprecated, [{"code": "BundleDeprecated", "reason": "we stay on 1.x for now"}]))
	r.decision.allowed == true
	d := r.decision.denials[0]
	d.overridden == true
	d.facts[2] == "waived by the ExtensionGate override: we stay on 1.x for now"
	_blocked(r).reason == "UpgradeAllowed"
}

test_an_unknown_deprecation_schema_is_named_as_given if {
	d := _one(f.with_extension_patch({"candidate": {"deprecations": [{"schema": "olm.other", "name": "x", "message": "m"}]}}), "BundleDeprecated")
	d.facts == ["ClusterCatalog demo-catalog deprecates olm.other x: m"]
}

# --- the extension

test_an_extension_without_an_installed_bundle if {
	doc := f.with_extension_patch({
		"installed": null, "candidate": null, "operands": [],
		"extension": {"status": {"install": null, "conditions": [
			f.extension_cond("Installed", "False", "Failed", "no bundle installed", 2),
			f.extension_cond("Progressing", "True", "Retrying", "resolving", 2),
		]}},
	})
	_codes(doc) == {"ExtensionNotInstalled", "ExtensionProgressing"}
	d := _one(doc, "ExtensionNotInstalled")
	d.facts == [
		"ClusterExtension tollgate-demo reports no status.install.bundle",
		"ClusterExtension tollgate-demo: Installed=False since 2026-11-22T09:00:00Z: no bundle installed (reason Failed)",
	]
	d.lift[0].command == "kubectl get clusterextension tollgate-demo -o yaml"
	count(d.lift) == 1
	r := _result(doc)
	r.state == "None"
	f.condition(r.conditions, "ExtensionInstalled").reason == "NotInstalled"
	f.condition(r.health, "Available") == {
		"type": "Available", "status": "Unknown", "reason": "InstallInvalid",
		"message": "ClusterExtension tollgate-demo has no installed bundle, so there are no operands to observe",
	}
}

test_not_installed_cannot_be_overridden if {
	doc := _with_overrides(f.with_extension_patch({"installed": null}), [{"code": "ExtensionNotInstalled", "reason": "x"}])
	_one(doc, "ExtensionNotInstalled").overridden == false
}

test_a_settled_extension_of_olm_v1_1_11_is_allowed if {
	# v1.11.0 writes the deprecation conditions with status False and reason NotDeprecated
	doc := f.with_extension_conditions([
		f.extension_cond("Installed", "True", "Succeeded", "Installed bundle tollgate-demo.v1.0.0 successfully", 2),
		f.extension_cond("Progressing", "True", "Succeeded", "Desired state reached", 2),
		f.extension_cond("Deprecated", "False", "NotDeprecated", "", 2),
		f.extension_cond("PackageDeprecated", "False", "NotDeprecated", "", 2),
		f.extension_cond("ChannelDeprecated", "False", "NotDeprecated", "", 2),
		f.extension_cond("BundleDeprecated", "False", "NotDeprecated", "", 2),
	])
	_decision(doc).allowed == true
}

test_unknown_condition_types_are_ignored if {
	doc := f.with_extension_conditions(array.concat(f.settled_conditions(2), [f.extension_cond("Serving", "False", "Unavailable", "stray", 1)]))
	_decision(doc).allowed == true
}

test_installed_not_true_is_progressing if {
	doc := f.with_extension_conditions(_settled_but("Installed", f.extension_cond("Installed", "Unknown", "Failed", "installing", 2)))
	_codes(doc) == {"ExtensionProgressing"}
	d := _one(doc, "ExtensionProgressing")
	d.message == "ClusterExtension tollgate-demo is not settled, OLM v1 is still working on it: ClusterExtension tollgate-demo: Installed=Unknown since 2026-11-22T09:00:00Z: installing (reason Failed)"
	d.lift[1].command == "kubectl get clusterextension tollgate-demo -o yaml"
	d.lift[2].override == "ExtensionProgressing"
	c := f.condition(_result(doc).conditions, "ExtensionInstalled")
	c.reason == "Progressing"
}

test_progressing_retrying_is_progressing if {
	doc := f.with_extension_conditions(_settled_but("Progressing", f.extension_cond("Progressing", "True", "Retrying", "catalog unreachable", 2)))
	_codes(doc) == {"ExtensionProgressing"}
}

test_progressing_false_is_progressing if {
	doc := f.with_extension_conditions(_settled_but("Progressing", f.extension_cond("Progressing", "False", "Succeeded", "", 2)))
	_codes(doc) == {"ExtensionProgressing"}
}

test_missing_conditions_are_progressing if {
	d := _one(f.with_extension_conditions([]), "ExtensionProgressing")
	d.facts == ["ClusterExtension tollgate-demo has no Installed condition yet", "ClusterExtension tollgate-demo has no Progressing condition yet"]
}

test_a_stale_condition_is_progressing if {
	doc := f.with_extension_conditions(_settled_but("BundleDeprecated", f.extension_cond("BundleDeprecated", "False", "Deprecated", "", 1)))
	d := _one(doc, "ExtensionProgressing")
	d.facts == ["ClusterExtension tollgate-demo: BundleDeprecated=False since 2026-11-22T09:00:00Z: reason Deprecated (observed at generation 1; the object is at generation 2)"]
}

test_a_pin_the_installed_bundle_has_not_reached_is_progressing if {
	doc := f.with_extension_patch({"extension": {"spec": {"source": {"catalog": {"version": "v1.1.0"}}}}})
	d := _one(doc, "ExtensionProgressing")
	d.facts == ["ClusterExtension tollgate-demo pins version v1.1.0 (spec.source.catalog.version), but its installed bundle tollgate-demo.v1.0.0 is at version 1.0.0"]
}

test_a_range_pin_is_no_exact_pin if {
	doc := f.with_extension_patch({"extension": {"spec": {"source": {"catalog": {"version": ">=1.0.0 <2.0.0"}}}}})
	_codes(doc) == set()
}

test_no_pin_is_no_exact_pin if {
	doc := json.remove(f.extension_input, ["extension/spec/source/catalog/version"])
	_codes(doc) == set()
}

test_an_exact_pin_with_build_metadata if {
	doc := f.with_extension_patch({"extension": {"spec": {"source": {"catalog": {"version": "1.0.0+build.1"}}}}})
	_codes(doc) == set()
}

# --- health

_degraded := f.with_extension_patch({"operands": [f.extension_operand("example", [
	f.cond("Available", "True", "Ok", "", "2026-11-21T08:00:00Z"),
	f.cond("Progressing", "True", "Rolling", "rolling out", "2026-11-21T08:00:00Z"),
	f.cond("Degraded", "True", "Broken", "1 of 3 down", "2026-11-21T08:00:00Z"),
])]})

test_degraded_and_progressing_operands if {
	_codes(_degraded) == {"OperatorDegraded", "OperatorProgressing"}
	d := _one(_degraded, "OperatorDegraded")
	d.message == "tollgate-demo.v1.0.0 (ClusterExtension tollgate-demo) is Degraded (Broken): 1 of 1 operands report Degraded=True; most recent: Demo demo/example: 1 of 3 down"
	d.facts == ["Demo demo/example: Degraded=True since 2026-11-21T08:00:00Z: 1 of 3 down (reason Broken)"]
	d.lift[0] == {"text": "the operands must report Degraded=False: fix Demo demo/example, or wait until they heal"}
	p := _one(_degraded, "OperatorProgressing")
	p.lift[0] == {"text": "wait until the operands finish their work and report Progressing=False (Demo demo/example)"}
}

test_health_without_operands_follows_installed if {
	r := _result(f.with_extension_patch({"operands": []}))
	r.health == [
		{"type": "Available", "status": "True", "reason": "NoOperands", "message": "tollgate-demo.v1.0.0 has no operands; ClusterExtension tollgate-demo reports Installed=True"},
		{"type": "Progressing", "status": "False", "reason": "NoOperands", "message": "tollgate-demo.v1.0.0 has no operands"},
		{"type": "Degraded", "status": "False", "reason": "NoOperands", "message": "tollgate-demo.v1.0.0 has no operands"},
	]
	r.decision.allowed == true
}

test_health_without_operands_or_installed_condition_is_unknown if {
	c := health.aggregate("Available") with input as f.with_extension_patch({"operands": [], "extension": {"status": {"conditions": []}}})
	c.status == "Unknown"
	c.message == "tollgate-demo.v1.0.0 has no operands; ClusterExtension tollgate-demo reports Installed=Unknown"
}

test_health_subject_without_an_installed_bundle if {
	doc := object.union(_degraded, {"installed": null})
	startswith(_one(doc, "OperatorDegraded").message, "ClusterExtension tollgate-demo is Degraded")
}
