package tollgate.packs.firstinstall.test

import data.tollgate.packs.firstinstall

# --- input builders ------------------------------------------------------------------------------

_plan := {"metadata": {"name": "install-abc", "namespace": "team-a"}, "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": ["etcdoperator.v0.9.4"]}, "status": {"phase": "RequiresApproval"}}

# _csv is an end of a move: a CSV of package etcd.
_csv(name) := {"name": name, "package": "etcd", "version": null, "versionFrom": "not read by this pack"}

# _move is the move from the CSV named installed ("": a first install) to the one named current,
# as plan install-abc makes it, from catalog olm/operatorhubio.
_move(installed, current) := {
	"namespace": "team-a",
	"installPlan": "install-abc",
	"from": _from(installed),
	"to": object.union(_csv(current), {"channel": "alpha", "catalog": {"namespace": "olm", "name": "operatorhubio"}}),
}

_from("") := null

_from(name) := object.union(_csv(name), {"phase": "Succeeded", "operatorCondition": null, "owner": {"kind": "Subscription", "namespace": "team-a", "name": "etcd"}}) if name != ""

# _input is a Subscription's document; it moves from installed to current unless nothing is
# pending (move null).
_input(installed, current, plans) := {
	"apiVersion": "tollgate.dev/input/v1",
	"subscription": {
		"metadata": {"name": "etcd", "namespace": "team-a"},
		"spec": {"name": "etcd", "channel": "alpha", "source": "operatorhubio", "sourceNamespace": "olm"},
		"status": {"installedCSV": installed, "currentCSV": current},
	},
	"pendingInstallPlans": plans,
	"now": "2024-06-05T12:00:00Z",
	"move": _pending_move(installed, current, plans),
}

_pending_move(installed, installed, []) := null

_pending_move(installed, current, plans) := _move(installed, current) if {
	[installed, plans] != [current, []]
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
			"etcdoperator.v0.9.4 replaces no CSV in namespace team-a (the move has no from), so it is a first install of package etcd from catalog olm/operatorhubio",
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

# A move whose new CSV has no name (Go always names it) is still held.
test_a_first_install_to_an_unnamed_csv_is_held if {
	some d in firstinstall.deny with input as _input("", "", [_plan])
	startswith(d.message, "the pending install is a first install")
}

test_a_document_where_nothing_moves_is_not_held if {
	count(firstinstall.deny) == 0 with input as _input("", "", [])
	count(firstinstall.deny) == 0 with input as object.remove(_first, ["move"])
	count(firstinstall.deny) == 0 with input as object.union(_first, {"move": "install"})
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

# --- which move: its ends, whatever the Subscription says ---------------------------------------

# A Subscription deleted and created again reports no installed CSV, while its plan replaces
# etcdoperator.v0.9.2, which still runs: an upgrade, not a first install.
test_a_recreated_subscriptions_move_is_not_a_first_install if {
	inp := object.union(_input("etcdoperator.v0.9.2", "etcdoperator.v0.9.4", [_plan]), {"subscription": {"status": {"installedCSV": ""}}})
	inp.subscription.status.installedCSV == ""
	count(firstinstall.deny) == 0 with input as inp
}

# A Subscription with an installed CSV whose plan has a CSV step that replaces nothing (a new
# dependency, gamma, from another catalog): a first install of gamma, judged by the move's
# package, catalog and namespace.
_dependency := object.union(_input("etcdoperator.v0.9.2", "etcdoperator.v0.9.4", [_plan]), {"move": {
	"from": null,
	"to": {"name": "gamma.v1.0.0", "package": "gamma", "catalog": {"namespace": "team-a", "name": "internal"}},
}})

test_a_csv_step_that_replaces_nothing_is_a_first_install_of_its_package if {
	ds := firstinstall.deny with input as _dependency with data.tollgate.config.packs.firstinstall as {"allow": [{"package": "etcd"}]}
	[d.message | some d in ds] == ["gamma.v1.0.0 is a first install of package gamma from team-a/internal in namespace team-a; no allow rule matches, so it waits for an admin to override FirstInstallNotApproved on the UpgradeGate"]
	count(firstinstall.deny) == 0 with input as _dependency with data.tollgate.config.packs.firstinstall as {"allow": [{"package": "gamma", "source": "team-a/*"}]}
}

test_a_move_without_a_catalog_has_an_empty_source if {
	inp := json.patch(_dependency, [{"op": "remove", "path": "/move/to/catalog"}])
	some d in firstinstall.deny with input as inp
	contains(d.message, "package gamma from / in namespace team-a")
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

# An extension document is not this pack's, though its move is a first install: Tollgate never
# installs an extension.
test_an_extension_document_is_not_judged if {
	doc := {
		"apiVersion": "tollgate.dev/extension/v1",
		"extension": {"metadata": {"name": "tollgate-demo"}, "spec": {"namespace": "demo", "source": {"catalog": {"packageName": "tollgate-demo"}}}},
		"installed": null,
		"candidate": {"name": "tollgate-demo.v1.1.0", "package": "tollgate-demo", "version": "1.1.0", "catalog": "demo-catalog"},
		"catalogs": [], "catalogErrors": [], "operands": [], "gate": null, "config": {},
		"now": "2026-11-22T10:00:00Z",
		"move": {
			"namespace": "demo", "installPlan": null, "from": null,
			"to": {"name": "tollgate-demo.v1.1.0", "package": "tollgate-demo", "version": "1.1.0", "versionFrom": "ClusterCatalog demo-catalog (the bundle's olm.package property)", "channel": "stable", "catalog": {"namespace": "", "name": "demo-catalog"}},
		},
	}
	count(firstinstall.deny) == 0 with input as doc
}
