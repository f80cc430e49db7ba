package tollgate.subscription_test

import data.tollgate.fixtures_test as f
import data.tollgate.subscription

_types := [
	"ResolutionFailed", "CatalogSourcesUnhealthy", "CatalogSourceInvalid", "PackageChannelInvalid",
	"InstallPlanFailed", "InstallPlanMissing", "InstallPlanAwaitingManualApproval",
	"InstalledCSVReplacementAvailable", "InstalledCSVMissing", "InstalledCSVFailed",
]

# _c is the condition of type t for input doc.
_c(doc, t) := c if {
	conds := subscription.conditions with input as doc
	c := f.condition(conds, t)
}

_is(doc, t, status, reason) if {
	c := _c(doc, t)
	c.status == status
	c.reason == reason
}

# --- every type, always, well formed

_well_formed(doc) if {
	conds := subscription.conditions with input as doc
	[c.type | some c in conds] == _types
	every c in conds {
		c.status in {"True", "False", "Unknown"}
		regex.match(`^[A-Z][A-Za-z0-9]*$`, c.reason)
		c.message != ""
	}
}

test_all_ten_types_are_present_for_an_upgrade if _well_formed(f.base)

test_all_ten_types_are_present_for_a_first_install if _well_formed(f.first_install)

test_all_ten_types_are_present_when_everything_is_missing if {
	_well_formed(f.with_patch({
		"installedCSV": null, "installPlan": null, "pendingInstallPlans": [], "catalogSources": [],
		"sourceCatalog": null, "operatorCondition": null, "packageManifest": null, "operands": [],
		"gate": null,
	}))
}

# --- ResolutionFailed mirrors OLM

test_resolution_failed_is_false_when_olm_reports_none if _is(f.base, "ResolutionFailed", "False", "NoFailureReported")

test_resolution_failed_mirrors_olm_true if {
	doc := f.with_patch({"subscription": {"status": {"conditions": [{
		"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable",
		"message": "no operators found in channel alpha",
	}]}}})
	_is(doc, "ResolutionFailed", "True", "ConstraintsNotSatisfiable")
	_c(doc, "ResolutionFailed").message == "no operators found in channel alpha"
}

test_resolution_failed_mirrors_olm_unknown_and_fills_a_missing_reason if {
	doc := f.with_patch({"subscription": {"status": {"conditions": [{"type": "ResolutionFailed", "status": "Unknown"}]}}})
	_is(doc, "ResolutionFailed", "Unknown", "ResolutionFailed")
}

test_resolution_failed_mirrors_olm_false if {
	doc := f.with_patch({"subscription": {"status": {"conditions": [{"type": "ResolutionFailed", "status": "False", "reason": "Resolved", "message": "ok"}]}}})
	_is(doc, "ResolutionFailed", "False", "Resolved")
}

# --- CatalogSourcesUnhealthy over every visible catalog

test_catalog_sources_unhealthy_false_when_all_ready if {
	_is(f.base, "CatalogSourcesUnhealthy", "False", "CatalogSourcesHealthy")
	_c(f.base, "CatalogSourcesUnhealthy").message == "all 2 visible catalog sources are READY"
}

test_catalog_sources_unhealthy_true_for_a_catalog_that_is_not_the_source if {
	doc := f.with_patch({"catalogSources": [f.catalog("olm", "operatorhubio", "READY"), f.catalog("operators", "private", "TRANSIENT_FAILURE")]})
	_is(doc, "CatalogSourcesUnhealthy", "True", "CatalogSourcesUnhealthy")
	_c(doc, "CatalogSourcesUnhealthy").message == "1 of 2 visible catalog sources are not READY: operators/private (TRANSIENT_FAILURE)"
}

test_catalog_sources_unhealthy_unknown_without_status if {
	doc := f.with_patch({"catalogSources": [f.catalog("olm", "operatorhubio", "READY"), f.catalog("operators", "private", "")]})
	_is(doc, "CatalogSourcesUnhealthy", "Unknown", "MissingCatalogInfo")
	contains(_c(doc, "CatalogSourcesUnhealthy").message, "operators/private")
}

test_catalog_sources_unhealthy_true_wins_over_unknown if {
	doc := f.with_patch({"catalogSources": [f.catalog("olm", "operatorhubio", "CONNECTING"), f.catalog("operators", "private", "")]})
	_is(doc, "CatalogSourcesUnhealthy", "True", "CatalogSourcesUnhealthy")
	_c(doc, "CatalogSourcesUnhealthy").message == "1 of 2 visible catalog sources are not READY: olm/operatorhubio (CONNECTING); the health of 1 of 2 visible catalog sources is not yet known (no status.connectionState): operators/private"
}

# A missing source catalog is unhealthy (OLM: "targeted catalogsource ... missing"), and the
# denial CatalogSourceUnhealthy names the same fact.
test_catalog_sources_unhealthy_true_when_the_source_is_missing if {
	doc := f.with_patch({"sourceCatalog": null, "catalogSources": [f.catalog("operators", "private", "READY")]})
	_is(doc, "CatalogSourcesUnhealthy", "True", "CatalogSourceNotFound")
	_c(doc, "CatalogSourcesUnhealthy").message == "the source catalog olm/operatorhubio (spec.sourceNamespace/spec.source) does not exist: create it, or point spec.source and spec.sourceNamespace at an existing catalog"
}

test_catalog_sources_unhealthy_for_a_missing_source_lists_the_other_unhealthy_catalogs_too if {
	doc := f.with_patch({"sourceCatalog": null, "catalogSources": [f.catalog("operators", "private", "CONNECTING"), f.catalog("operators", "fresh", "")]})
	_is(doc, "CatalogSourcesUnhealthy", "True", "CatalogSourceNotFound")
	_c(doc, "CatalogSourcesUnhealthy").message == concat("; ", [
		"the source catalog olm/operatorhubio (spec.sourceNamespace/spec.source) does not exist: create it, or point spec.source and spec.sourceNamespace at an existing catalog",
		"1 of 2 visible catalog sources are not READY: operators/private (CONNECTING)",
		"the health of 1 of 2 visible catalog sources is not yet known (no status.connectionState): operators/fresh",
	])
}

test_catalog_sources_unhealthy_true_when_no_catalog_is_visible if {
	doc := f.with_patch({"catalogSources": [], "sourceCatalog": null})
	_is(doc, "CatalogSourcesUnhealthy", "True", "CatalogSourceNotFound")
}

# --- CatalogSourceInvalid: the source catalog only

test_catalog_source_invalid_false_for_a_valid_source if _is(f.base, "CatalogSourceInvalid", "False", "CatalogSourceValid")

test_catalog_source_invalid_unknown_when_the_source_is_missing if {
	doc := f.with_patch({"sourceCatalog": null, "catalogSources": [f.catalog("operators", "private", "READY")]})
	_is(doc, "CatalogSourceInvalid", "Unknown", "CatalogSourceNotFound")
	_c(doc, "CatalogSourceInvalid").message == "the source catalog olm/operatorhubio (spec.sourceNamespace/spec.source) does not exist, so whether it is valid is unknown (CatalogSourcesUnhealthy reports it missing)"
}

test_catalog_source_invalid_true_when_the_source_is_not_visible if {
	doc := f.with_patch({
		"subscription": {"spec": {"sourceNamespace": "elsewhere"}},
		"sourceCatalog": f.catalog("elsewhere", "operatorhubio", "READY"),
	})
	_is(doc, "CatalogSourceInvalid", "True", "CatalogSourceNotVisible")
	_c(doc, "CatalogSourceInvalid").message == "the source catalog elsewhere/operatorhubio is neither in the Subscription's namespace operators nor in the global catalog namespace olm, so OLM does not resolve from it: move the catalog or fix spec.sourceNamespace"
}

test_catalog_source_invalid_names_the_spec_violations_of_a_source_that_is_not_visible_too if {
	bad := object.union(f.catalog("elsewhere", "operatorhubio", "READY"), {"spec": {"sourceType": "grpc"}})
	doc := f.with_patch({"subscription": {"spec": {"sourceNamespace": "elsewhere"}}, "sourceCatalog": bad})
	_is(doc, "CatalogSourceInvalid", "True", "CatalogSourceNotVisible")
	contains(
		_c(doc, "CatalogSourceInvalid").message,
		"move the catalog or fix spec.sourceNamespace; its spec is invalid too: spec spec.catalogImageSource, spec.sourceType are set together",
	)
}

test_catalog_source_invalid_true_for_an_invalid_spec if {
	bad := object.union(f.catalog("olm", "operatorhubio", "READY"), {"spec": {"sourceType": "grpc"}})
	doc := f.with_patch({"sourceCatalog": bad, "catalogSources": [bad]})
	_is(doc, "CatalogSourceInvalid", "True", "CatalogSourceSpecInvalid")
	contains(_c(doc, "CatalogSourceInvalid").message, "spec.catalogImageSource, spec.sourceType are set together")
}

test_an_invalid_other_catalog_does_not_make_the_source_invalid if {
	doc := f.with_patch({"catalogSources": [f.catalog("olm", "operatorhubio", "READY"), {"metadata": {"namespace": "operators", "name": "empty"}, "spec": {}}]})
	_is(doc, "CatalogSourceInvalid", "False", "CatalogSourceValid")
}

# --- PackageChannelInvalid

test_package_channel_invalid_false_for_a_known_channel if _is(f.base, "PackageChannelInvalid", "False", "PackageChannelValid")

test_package_channel_invalid_false_with_the_default_channel if {
	doc := object.union(f.base, {"subscription": {"spec": {"channel": ""}}})
	_is(doc, "PackageChannelInvalid", "False", "PackageChannelValid")
	subscription.channel == "alpha" with input as doc
}

test_package_channel_invalid_true_for_an_unknown_channel if {
	doc := f.with_patch({"subscription": {"spec": {"channel": "stable"}}})
	_is(doc, "PackageChannelInvalid", "True", "ChannelNotFound")
	contains(_c(doc, "PackageChannelInvalid").message, "one of: alpha, beta")
}

test_package_channel_invalid_true_without_any_channel if {
	doc := f.with_patch({"subscription": {"spec": {"channel": ""}}, "packageManifest": f.manifest("", [{"name": "beta", "currentCSV": "x"}])})
	_is(doc, "PackageChannelInvalid", "True", "NoDefaultChannel")
}

test_package_channel_invalid_unknown_without_a_manifest if {
	_is(f.with_patch({"packageManifest": null}), "PackageChannelInvalid", "Unknown", "PackageManifestUnknown")
}

# --- InstallPlanFailed

test_install_plan_failed_false_while_awaiting_approval if {
	_is(f.base, "InstallPlanFailed", "False", "InstallPlanNotFailed")
	contains(_c(f.base, "InstallPlanFailed").message, "RequiresApproval")
}

test_install_plan_failed_true_with_the_plans_reason if {
	failed := object.union(f.plan("install-abc", ["etcdoperator.v0.9.4"], "Failed"), {"status": {"conditions": [{
		"type": "Installed", "status": "False", "reason": "InstallComponentFailed",
		"message": "error creating csv etcdoperator.v0.9.4",
	}]}})
	doc := f.with_patch({"installPlan": failed, "pendingInstallPlans": []})
	_is(doc, "InstallPlanFailed", "True", "InstallComponentFailed")
	_c(doc, "InstallPlanFailed").message == "InstallPlan operators/install-abc failed: error creating csv etcdoperator.v0.9.4"
}

test_install_plan_failed_true_with_a_default_reason if {
	doc := f.with_patch({"installPlan": f.plan("install-abc", ["etcdoperator.v0.9.4"], "Failed"), "pendingInstallPlans": []})
	_is(doc, "InstallPlanFailed", "True", "InstallPlanFailed")
	_c(doc, "InstallPlanFailed").message == "InstallPlan operators/install-abc failed"
}

test_install_plan_failed_unknown_when_the_plan_is_missing if {
	_is(f.with_patch({"installPlan": null}), "InstallPlanFailed", "Unknown", "InstallPlanNotFound")
}

test_install_plan_failed_false_without_a_plan if _is(f.at_latest, "InstallPlanFailed", "False", "NoInstallPlan")

# --- InstallPlanMissing

test_install_plan_missing_true_when_the_reference_dangles if {
	doc := f.with_patch({"installPlan": null})
	_is(doc, "InstallPlanMissing", "True", "ReferencedInstallPlanNotFound")
	contains(_c(doc, "InstallPlanMissing").message, "operators/install-abc")
}

test_install_plan_missing_false_when_found if _is(f.base, "InstallPlanMissing", "False", "InstallPlanFound")

test_install_plan_missing_false_without_a_reference if _is(f.at_latest, "InstallPlanMissing", "False", "NoInstallPlanReferenced")

# --- InstallPlanAwaitingManualApproval

test_awaiting_manual_approval_true_for_a_manual_unapproved_plan if {
	_is(f.base, "InstallPlanAwaitingManualApproval", "True", "RequiresApproval")
	_c(f.base, "InstallPlanAwaitingManualApproval").message == "awaiting manual approval: InstallPlan operators/install-abc (etcdoperator.v0.9.4)"
}

test_awaiting_manual_approval_true_for_a_pending_plan_not_yet_referenced if {
	doc := f.with_patch({"installPlan": null, "subscription": {"status": {"installPlanRef": null}}})
	_is(doc, "InstallPlanAwaitingManualApproval", "True", "RequiresApproval")
}

test_awaiting_manual_approval_false_once_approved if {
	approved := object.union(f.plan("install-abc", ["etcdoperator.v0.9.4"], "Installing"), {"spec": {"approved": true}})
	doc := f.with_patch({"installPlan": approved, "pendingInstallPlans": [approved]})
	_is(doc, "InstallPlanAwaitingManualApproval", "False", "NoApprovalPending")
}

test_awaiting_manual_approval_false_for_automatic_subscriptions if {
	auto := object.union(f.plan("install-abc", ["etcdoperator.v0.9.4"], "Installing"), {"spec": {"approval": "Automatic", "approved": true}})
	doc := f.with_patch({"subscription": {"spec": {"installPlanApproval": "Automatic"}}, "installPlan": auto, "pendingInstallPlans": [auto]})
	_is(doc, "InstallPlanAwaitingManualApproval", "False", "AutomaticApproval")
	contains(_c(doc, "InstallPlanAwaitingManualApproval").message, "set spec.installPlanApproval to Manual")
}

# --- InstalledCSVReplacementAvailable

test_replacement_available_true_when_current_differs if {
	_is(f.base, "InstalledCSVReplacementAvailable", "True", "ReplacementAvailable")
	_c(f.base, "InstalledCSVReplacementAvailable").message == "etcdoperator.v0.9.4 replaces the installed etcdoperator.v0.9.2"
}

test_replacement_available_true_when_the_channel_head_differs if {
	doc := object.union(f.at_latest, {"subscription": {"spec": {"channel": "beta"}}})
	_is(doc, "InstalledCSVReplacementAvailable", "True", "ReplacementAvailable")
	subscription.replacement == "etcdoperator.v0.10.0" with input as doc
}

test_replacement_available_false_at_the_channel_head if _is(f.at_latest, "InstalledCSVReplacementAvailable", "False", "NoReplacementAvailable")

test_replacement_available_false_on_a_first_install if _is(f.first_install, "InstalledCSVReplacementAvailable", "False", "NotInstalled")

# --- InstalledCSVMissing

test_installed_csv_missing_true_when_the_csv_is_gone if {
	_is(f.with_patch({"installedCSV": null}), "InstalledCSVMissing", "True", "InstalledCSVNotFound")
}

test_installed_csv_missing_false_when_found if _is(f.base, "InstalledCSVMissing", "False", "InstalledCSVFound")

test_installed_csv_missing_false_on_a_first_install if _is(f.first_install, "InstalledCSVMissing", "False", "NotInstalled")

# --- InstalledCSVFailed

test_installed_csv_failed_true_with_the_csvs_reason if {
	failed := object.union(f.csv("etcdoperator.v0.9.2", "Failed"), {"status": {"reason": "ComponentUnhealthy", "message": "deployment etcd-operator not available"}})
	doc := f.with_patch({"installedCSV": failed})
	_is(doc, "InstalledCSVFailed", "True", "ComponentUnhealthy")
	_c(doc, "InstalledCSVFailed").message == "etcdoperator.v0.9.2 failed: deployment etcd-operator not available"
}

test_installed_csv_failed_true_with_a_default_reason if {
	doc := f.with_patch({"installedCSV": {"status": {"phase": "Failed", "reason": "", "message": ""}}})
	_is(doc, "InstalledCSVFailed", "True", "CSVFailed")
	_c(doc, "InstalledCSVFailed").message == "etcdoperator.v0.9.2 failed"
}

test_installed_csv_failed_unknown_when_the_csv_is_gone if {
	_is(f.with_patch({"installedCSV": null}), "InstalledCSVFailed", "Unknown", "InstalledCSVNotFound")
}

test_installed_csv_failed_false_when_succeeded if _is(f.base, "InstalledCSVFailed", "False", "InstalledCSVNotFailed")

test_installed_csv_failed_false_on_a_first_install if _is(f.first_install, "InstalledCSVFailed", "False", "NotInstalled")

# --- catalogStatus

test_catalog_status_reports_health_source_and_validity if {
	doc := f.with_patch({"catalogSources": [
		f.catalog("olm", "operatorhubio", "READY"),
		f.catalog("operators", "fresh", ""),
		object.union(f.catalog("operators", "private", "CONNECTING"), {"spec": {"sourceType": "grpc"}}),
	]})
	st := subscription.catalog_status with input as doc
	st == [
		{"namespace": "olm", "name": "operatorhubio", "healthy": "True", "lastObservedState": "READY", "source": true, "valid": true},
		{"namespace": "operators", "name": "fresh", "healthy": "Unknown", "lastObservedState": "", "source": false, "valid": true},
		{"namespace": "operators", "name": "private", "healthy": "False", "lastObservedState": "CONNECTING", "source": false, "valid": false},
	]
}

# --- state and upToDate

test_state_upgrade_pending_with_a_plan if {
	subscription.state == "UpgradePending" with input as f.base
	not subscription.up_to_date with input as f.base
}

test_state_upgrade_pending_for_a_referenced_plan_that_is_installing if {
	doc := f.with_patch({"installPlan": f.plan("install-abc", ["etcdoperator.v0.9.4"], "Installing"), "pendingInstallPlans": []})
	subscription.state == "UpgradePending" with input as doc
}

test_state_upgrade_available_without_a_plan if {
	doc := f.with_patch({"installPlan": null, "pendingInstallPlans": [], "subscription": {"status": {"installPlanRef": null}}})
	subscription.state == "UpgradeAvailable" with input as doc
}

test_state_upgrade_available_on_a_first_install_without_a_plan if {
	doc := object.union(f.first_install, {"installPlan": null, "pendingInstallPlans": []})
	subscription.state == "UpgradeAvailable" with input as doc
}

test_state_upgrade_failed_when_the_plan_failed if {
	doc := f.with_patch({"installPlan": f.plan("install-abc", ["etcdoperator.v0.9.4"], "Failed"), "pendingInstallPlans": []})
	subscription.state == "UpgradeFailed" with input as doc
}

test_state_upgrade_failed_when_the_installed_csv_failed if {
	doc := object.union(f.at_latest, {"installedCSV": f.csv("etcdoperator.v0.9.4", "Failed")})
	subscription.state == "UpgradeFailed" with input as doc
	not subscription.up_to_date with input as doc
}

test_state_at_latest_known_when_current_and_succeeded if {
	subscription.state == "AtLatestKnown" with input as f.at_latest
	subscription.up_to_date with input as f.at_latest
}

test_state_is_not_at_latest_known_while_the_current_csv_is_pending if {
	# OLM says AtLatestKnown here; Tollgate waits for Succeeded.
	doc := object.union(f.at_latest, {"installedCSV": f.csv("etcdoperator.v0.9.4", "Pending")})
	subscription.state == "UpgradePending" with input as doc
	not subscription.up_to_date with input as doc
}

test_not_up_to_date_when_the_channel_head_is_newer if {
	doc := object.union(f.at_latest, {"subscription": {"spec": {"channel": "beta"}}})
	not subscription.up_to_date with input as doc
	subscription.state == "UpgradeAvailable" with input as doc
}

test_state_none_before_resolution if {
	doc := f.with_patch({
		"subscription": {"status": {"installedCSV": "", "currentCSV": "", "installPlanRef": null}},
		"installedCSV": null, "installPlan": null, "pendingInstallPlans": [],
	})
	subscription.state == "None" with input as doc
}

test_state_none_when_the_installed_csv_is_missing if {
	doc := object.union(f.at_latest, {"installedCSV": null})
	subscription.state == "None" with input as doc
}

test_several_operator_groups_fail_resolution_as_olm_would if {
	doc := f.with_patch({"operatorGroups": [f.base.operatorGroup, object.union(f.base.operatorGroup, {"metadata": {"name": "decoy"}})]})
	conds := subscription.conditions with input as doc
	c := f.condition(conds, "ResolutionFailed")
	c.status == "True"
	c.reason == "TooManyOperatorGroups"
}

# --- several plans, and fields that are missing or of the wrong type

test_awaiting_plans_are_deduplicated_and_sorted_by_namespace_and_name if {
	other := f.plan("install-aaa", ["etcdoperator.v0.9.3"], "RequiresApproval")
	stale := object.union(f.base.installPlan, {"spec": {"approved": true}})
	doc := f.with_patch({"pendingInstallPlans": [f.plan("install-zzz", ["etcdoperator.v0.9.4"], "Installing"), stale, other]})
	waiting := subscription.awaiting_plans with input as doc
	[p.metadata.name | some p in waiting] == ["install-aaa", "install-abc"]
	_c(doc, "InstallPlanAwaitingManualApproval").message == "awaiting manual approval: InstallPlan operators/install-aaa (etcdoperator.v0.9.3), operators/install-abc (etcdoperator.v0.9.4)"
}

# The first copy of a plan wins: the referenced plan, approved, hides a stale pending copy.
test_awaiting_plans_keep_the_referenced_copy_of_a_plan if {
	approved := object.union(f.base.installPlan, {"spec": {"approved": true}})
	doc := f.with_patch({"installPlan": approved, "pendingInstallPlans": [f.base.installPlan, f.plan("install-abd", ["x.v1"], "Installing")]})
	subscription.awaiting_plans == [] with input as doc
	_is(doc, "InstallPlanAwaitingManualApproval", "False", "NoApprovalPending")
}

test_catalog_sources_unhealthy_for_a_missing_source_lists_catalogs_not_yet_observed if {
	doc := f.with_patch({"sourceCatalog": null, "catalogSources": [f.catalog("operators", "fresh", "")]})
	_c(doc, "CatalogSourcesUnhealthy").message == concat("; ", [
		"the source catalog olm/operatorhubio (spec.sourceNamespace/spec.source) does not exist: create it, or point spec.source and spec.sourceNamespace at an existing catalog",
		"the health of 1 of 1 visible catalog sources is not yet known (no status.connectionState): operators/fresh",
	])
}

test_a_subscription_without_spec_or_status_reads_defaults if {
	doc := object.union(f.with_patch({"installPlan": null, "pendingInstallPlans": []}), {"subscription": {"spec": null, "status": null}})
	_well_formed(doc)
	subscription.channel == "alpha" with input as doc
	_c(doc, "InstallPlanMissing").reason == "NoInstallPlanReferenced"
	_c(doc, "InstallPlanAwaitingManualApproval").reason == "AutomaticApproval"
	_c(doc, "InstalledCSVReplacementAvailable").message == "no CSV of package  is installed yet"
}

test_a_manifest_without_channels_serves_none if {
	doc := f.with_patch({"packageManifest": {"status": {"channels": "alpha"}}})
	_is(doc, "PackageChannelInvalid", "True", "ChannelNotFound")
	subscription.channel_head == "" with input as doc
	doc2 := json.remove(object.union(doc, {"subscription": {"spec": {"channel": ""}}}), ["packageManifest/status/defaultChannel"])
	subscription.channel == "" with input as doc2
	_is(doc2, "PackageChannelInvalid", "True", "NoDefaultChannel")
}

test_phases_that_are_not_strings_read_as_none if {
	doc := f.with_patch({
		"installPlan": object.union(f.base.installPlan, {"status": {"phase": 3}}),
		"installedCSV": object.union(f.base.installedCSV, {"status": {"phase": ""}}),
	})
	_c(doc, "InstallPlanFailed").message == "InstallPlan operators/install-abc is in phase None"
	_c(doc, "InstalledCSVFailed").message == "etcdoperator.v0.9.2 is in phase None"
}
