package tollgate.lib_test

import data.tollgate.fixtures_test as f
import data.tollgate.lib

test_get_reads_a_path if lib.get({"a": {"b": 1}}, ["a", "b"], 0) == 1

test_get_defaults_on_a_missing_path if lib.get({"a": {}}, ["a", "b"], 0) == 0

test_get_defaults_on_null if lib.get(null, ["a"], "none") == "none"

test_condition_finds_by_type if {
	lib.condition([{"type": "A", "status": "True"}, {"type": "B", "status": "False"}], "B").status == "False"
}

test_condition_takes_the_first_duplicate if {
	lib.condition([{"type": "A", "status": "True"}, {"type": "A", "status": "False"}], "A").status == "True"
}

test_condition_is_undefined_when_absent if not lib.condition([{"type": "A"}], "B")

test_conditions_of_null_are_empty if lib.conditions(null) == []

test_names if {
	lib.name(f.base.subscription) == "etcd"
	lib.namespaced_name(f.base.subscription) == "operators/etcd"
	lib.kind_name(f.base.subscription) == "Subscription operators/etcd"
	lib.kind_name({"metadata": {"namespace": "n", "name": "x"}}) == "object n/x"
}

test_time_ns_parses_rfc3339 if lib.time_ns("1970-01-01T00:00:01Z") == 1000000000

test_time_ns_is_zero_when_unparseable if lib.time_ns("yesterday") == 0

test_time_ns_is_zero_when_absent if lib.time_ns(null) == 0

test_time_ns_is_zero_when_empty if lib.time_ns("") == 0

test_time_ns_parses_fractions_and_offsets if {
	lib.time_ns("1970-01-01T00:00:01.5Z") == 1500000000
	lib.time_ns("1970-01-01T01:00:01+01:00") == 1000000000
	lib.time_ns("1970-01-01T00:00:00.123456789-00:00") == 123456789
	lib.time_ns("2024-02-29T00:00:00Z") == 1709164800000000000
	lib.time_ns("2000-02-29T00:00:00Z") == 951782400000000000
}

# Every string time.parse_rfc3339_ns would reject (a built-in error, which the engine treats as
# a policy error) is caught by the pattern first: time_ns is then 0, without an error.
_unparseable := [
	"", "yesterday", "2026-11-22", "2026-11-22T10:00:00", "2026-11-22 10:00:00Z",
	"2026-11-22t10:00:00Z", "2026-11-22T10:00:00z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
	"2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-00T00:00:00Z",
	"2026-11-22T24:00:00Z", "2026-11-22T10:60:00Z", "2026-11-22T10:00:60Z", "2026-11-22T10:00:00.Z",
	"2026-11-22T10:00:00+0100",
	"1677-01-01T00:00:00Z", "2262-12-31T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
	" 2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z ", "+2026-11-22T10:00:00Z",
]

test_rfc3339_rejects_what_the_parser_rejects if {
	every ts in _unparseable {
		not lib.rfc3339(ts)
		lib.time_ns(ts) == 0
	}
}

test_rfc3339_also_rejects_offsets_beyond_a_day if {
	# Go parses these, but no real clock writes them: 0 is the safe reading
	every ts in ["2026-11-22T10:00:00+24:00", "2026-11-22T10:00:00+01:60"] {
		not lib.rfc3339(ts)
	}
}

test_rfc3339_rejects_non_strings if {
	every v in [null, 0, 1.5, true, {}, []] {
		not lib.rfc3339(v)
		lib.time_ns(v) == 0
	}
}

test_rfc3339_accepts_what_kubernetes_writes if {
	every ts in ["2026-11-22T10:00:00Z", "2026-11-22T10:00:00.000001Z", "1678-01-01T00:00:00Z", "2261-12-31T23:59:59-23:59"] {
		lib.rfc3339(ts)
		lib.time_ns(ts) != 0
	}
}

test_or_else if {
	lib.or_else("x", "d") == "x"
	lib.or_else("", "d") == "d"
	lib.or_else(null, "d") == "d"
}

test_denial_reads_the_code_from_metadata if {
	lib.denial({"custom": {"code": "Foo"}}, "msg") == {"code": "Foo", "message": "msg", "facts": [], "lift": []}
}

test_denial_carries_the_rules_title if {
	lib.denial({"title": "The foo is stuck", "custom": {"code": "Foo"}}, "msg") == {"code": "Foo", "title": "The foo is stuck", "message": "msg", "facts": [], "lift": []}
}

# METADATA
# title: A rule whose denial names it
# custom:
#   code: Titled
test_denial_from_rego_metadata_rule if {
	lib.denial(rego.metadata.rule(), "msg") == {"code": "Titled", "title": "A rule whose denial names it", "message": "msg", "facts": [], "lift": []}
}

test_explained_carries_facts_and_lift if {
	lib.explained({"title": "T", "custom": {"code": "Foo"}}, "msg", ["a fact"], [{"text": "do this"}]) == {
		"code": "Foo", "title": "T", "message": "msg",
		"facts": ["a fact"], "lift": [{"text": "do this"}],
	}
}

test_explained_without_a_title if {
	lib.explained({"custom": {"code": "Foo"}}, "msg", [], []) == {"code": "Foo", "message": "msg", "facts": [], "lift": []}
}

test_remedy_with_plain_names_has_a_command if {
	lib.remedy("edit it:", "kubectl edit operatorcondition -n %s %s", ["operators", "etcdoperator.v0.9.2"]) == {
		"text": "edit it:",
		"command": "kubectl edit operatorcondition -n operators etcdoperator.v0.9.2",
	}
}

test_remedy_without_a_safe_command_keeps_only_the_text if {
	every words in [["operators", "x; rm -rf /"], ["", "x"], ["Operators", "x"], ["operators", 7], ["operators", "x-"]] {
		lib.remedy("edit it:", "kubectl edit x -n %s %v", words) == {"text": "edit it"}
	}
}

test_said_quotes_message_and_reason if {
	lib.said({"message": "migrating storage", "reason": "Migrating"}) == "migrating storage (reason Migrating)"
	lib.said({"message": "migrating storage", "reason": ""}) == "migrating storage"
	lib.said({"reason": "Migrating"}) == "reason Migrating"
	lib.said({"message": 3}) == "no message"
}

test_condition_fact_states_type_status_time_and_message if {
	c := {"type": "Upgradeable", "status": "False", "reason": "Migrating", "message": "migrating storage", "lastTransitionTime": "2026-11-22T01:07:11Z"}
	lib.condition_fact("OperatorCondition etcd.v0.9.2", c) == "OperatorCondition etcd.v0.9.2: Upgradeable=False since 2026-11-22T01:07:11Z: migrating storage (reason Migrating)"
}

test_condition_fact_leaves_out_a_missing_time if {
	lib.condition_fact("X", {"type": "Degraded", "status": "True", "lastTransitionTime": ""}) == "X: Degraded=True: no message"
}

test_csv_names_and_phase if {
	lib.installed_csv_name == "etcdoperator.v0.9.2" with input as f.base
	lib.current_csv_name == "etcdoperator.v0.9.4" with input as f.base
	lib.csv_phase == "Succeeded" with input as f.base
	lib.csv_phase == "" with input as f.first_install
	lib.installed_csv_name == "" with input as f.first_install
}

test_global_catalog_namespace_defaults_to_olm if {
	lib.global_catalog_namespace == "olm" with input as object.union(f.base, {"config": {}})
	lib.global_catalog_namespace == "marketplace" with input as object.union(f.base, {"config": {"globalCatalogNamespace": "marketplace"}})
}

test_catalogs_are_sorted_and_unique if {
	names := [lib.namespaced_name(c) | some c in lib.catalogs] with input as f.base
	names == ["olm/operatorhubio", "operators/private"]
}

test_catalogs_include_a_source_catalog_elsewhere if {
	names := [lib.namespaced_name(c) | some c in lib.catalogs] with input as f.with_patch({"sourceCatalog": f.catalog("elsewhere", "cat", "READY")})
	names == ["elsewhere/cat", "olm/operatorhubio", "operators/private"]
}

test_catalogs_prefer_the_visible_copy if {
	cs := lib.catalogs[0] with input as f.with_patch({"sourceCatalog": f.catalog("olm", "operatorhubio", "CONNECTING")})
	cs.status.connectionState.lastObservedState == "READY"
}

test_is_source_catalog if {
	lib.is_source_catalog(f.catalog("olm", "operatorhubio", "READY")) with input as f.base
	not lib.is_source_catalog(f.catalog("operators", "private", "READY")) with input as f.base
}

test_join_names_sorts if lib.join_names({"b", "a"}) == "a, b"
