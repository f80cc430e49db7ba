package tollgate.packs.firstinstall.test

import data.tollgate.packs.firstinstall

# --- input builders ------------------------------------------------------------------------------

_plan := {"metadata": {"name": "install-abc", "namespace": "team-a"}, "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": ["etcdoperator.v0.9.4"]}, "status": {"phase": "RequiresApproval"}}

_input(installed, current, plans) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {
		"metadata": {"name": "etcd", "namespace": "team-a"},
		"spec": {"name": "etcd", "channel": "alpha", "source": "operatorhubio", "sourceNamespace": "olm"},
		"status": {"installedCSV": installed, "currentCSV": current},
	},
	"pendingInstallPlans": plans,
	"now": "2024-06-05T12:00:00Z",
}

_first := _input("", "etcdoperator.v0.9.4", [_plan])

_codes(denials) := {d.code | some d in denials}

_allows(cfg) if count(firstinstall.deny) == 0 with input as _first with data.tollgate.config.packs.firstinstall as cfg

_holds(cfg) if _codes(firstinstall.deny) == {"FirstInstallNotApproved"} with input as _first with data.tollgate.config.packs.firstinstall as cfg

# --- behaviour -------------------------------------------------------------------------------

_config_command := "kubectl get configmaps -A -l tollgate.dev/policy=data -o yaml"

test_every_first_install_is_held_by_default if {
	firstinstall.deny == {{
		"code": "FirstInstallNotApproved",
		"title": "A first install has not been approved",
		"message": "etcdoperator.v0.9.4 is a first install of package etcd from olm/operatorhubio in namespace team-a; no allow rule matches, so it waits for an admin to override FirstInstallNotApproved on the UpgradeGate",
		"facts": [
			"Subscription team-a/etcd has no installed CSV, so etcdoperator.v0.9.4 is a first install of package etcd from catalog olm/operatorhubio",
			"data.tollgate.config.packs.firstinstall.allow has no rules, so every first install is held",
		],
		"lift": [{
			"text": `an admin adds an allow rule that matches it, e.g. {"namespace": "team-a", "package": "etcd"}, to data.tollgate.config.packs.firstinstall.allow (the ConfigMaps labelled tollgate.dev/policy=data hold it):`,
			"command": _config_command,
		}],
	}} with input as _first
}

test_a_held_first_install_says_how_many_rules_did_not_match if {
	some d in firstinstall.deny with input as _first with data.tollgate.config.packs.firstinstall as {"allow": [{"package": "postgres"}, {"namespace": "sandbox-*"}]}
	d.facts[1] == "none of the 2 allow rules in data.tollgate.config.packs.firstinstall.allow matches namespace team-a, package etcd and source olm/operatorhubio"
}

test_a_first_install_without_current_csv_is_held if {
	some d in firstinstall.deny with input as _input("", "", [_plan])
	startswith(d.message, "the pending install is a first install")
}

test_a_subscription_with_nothing_to_install_is_not_held if {
	count(firstinstall.deny) == 0 with input as _input("", "", [])
}

test_upgrades_are_not_held if {
	count(firstinstall.deny) == 0 with input as _input("etcdoperator.v0.9.2", "etcdoperator.v0.9.4", [_plan])
}

test_an_allow_rule_for_the_package_allows if _allows({"allow": [{"package": "etcd"}]})

test_an_allow_rule_for_another_package_holds if _holds({"allow": [{"package": "postgres*"}]})

test_namespace_patterns_match if {
	_allows({"allow": [{"namespace": "team-*"}]})
	_holds({"allow": [{"namespace": "sandbox-*"}]})
}

test_every_key_of_a_rule_must_match if {
	_allows({"allow": [{"source": "olm/operatorhubio", "package": "*", "namespace": "team-a"}]})
	_holds({"allow": [{"source": "olm/redhat-operators", "package": "etcd"}]})
}

test_any_rule_may_allow if _allows({"allow": [{"package": "postgres"}, {"source": "olm/*"}]})

test_an_empty_allow_list_holds if _holds({"allow": []})

# --- configuration errors fail closed ------------------------------------------------------------

_config_error(cfg, fragment) if {
	some d in firstinstall.deny with input as _first with data.tollgate.config.packs.firstinstall as cfg
	d.code == "FirstInstallConfigInvalid"
	contains(d.message, fragment)
	_codes(firstinstall.deny) == {"FirstInstallConfigInvalid"} with input as _first with data.tollgate.config.packs.firstinstall as cfg
}

test_a_config_error_is_the_fact_and_fixing_it_the_remedy if {
	some d in firstinstall.deny with input as _first with data.tollgate.config.packs.firstinstall as {"allow": "etcd"}
	d.facts == ["data.tollgate.config.packs.firstinstall: allow is not a list"]
	d.lift == [{
		"text": "an admin fixes data.tollgate.config.packs.firstinstall as the fact says (the ConfigMaps labelled tollgate.dev/policy=data hold it):",
		"command": _config_command,
	}]
}

test_config_not_an_object if _config_error(["etcd"], "the configuration is not an object")

test_allow_not_a_list if _config_error({"allow": {"package": "etcd"}}, "allow is not a list")

test_rule_not_an_object if _config_error({"allow": ["etcd"]}, "allow[0] is not an object")

test_empty_rule if _config_error({"allow": [{}]}, `allow[0] is empty; write {"package": "*"}`)

test_unknown_key if _config_error({"allow": [{"name": "etcd"}]}, "allow[0] has unknown key name")

test_pattern_not_a_string if _config_error({"allow": [{"package": ["etcd"]}]}, "allow[0].package is not a string")

# glob.match raises a built-in error on a pattern it cannot compile; the pack checks each pattern
# first and reports it, so no such error ever happens.
test_a_pattern_glob_cannot_read_is_a_config_error if {
	every pattern in ["[z-a]", "[a-]", "{a,b", "etcd\\", "[]", "[a-cx-z]", "{a,{b,c}}"] {
		_config_error({"allow": [{"package": pattern}]}, sprintf("allow[0].package %q is not a pattern the pack reads", [pattern]))
	}
}

test_the_patterns_glob_reads_are_accepted if {
	every pattern in ["etcd", "*", "et?d", "[e]tcd", "[a-z]tcd", "[!x]tcd", "{etcd,postgres}", "e\\tcd", "{et*,x}", "e*d"] {
		_allows({"allow": [{"package": pattern}]})
	}
}

test_a_rule_that_is_not_an_object_is_not_also_empty if {
	msgs := {d.message | some d in firstinstall.deny with input as _first with data.tollgate.config.packs.firstinstall as {"allow": [""]}}
	count(msgs) == 1
}

# An extension document is not this pack's: Tollgate never installs an extension.
test_an_extension_document_is_not_judged if {
	doc := {
		"apiVersion": "tollgate.dev/extension/v1",
		"extension": {"metadata": {"name": "tollgate-demo"}, "spec": {"namespace": "demo", "source": {"catalog": {"packageName": "tollgate-demo"}}}},
		"installed": null,
		"candidate": {"name": "tollgate-demo.v1.1.0", "package": "tollgate-demo", "version": "1.1.0", "catalog": "demo-catalog"},
		"catalogs": [], "catalogErrors": [], "operands": [], "gate": null, "config": {},
		"now": "2026-11-22T10:00:00Z",
	}
	count(firstinstall.deny) == 0 with input as doc
}
