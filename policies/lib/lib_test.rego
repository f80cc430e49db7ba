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

test_or_else if {
	lib.or_else("x", "d") == "x"
	lib.or_else("", "d") == "d"
	lib.or_else(null, "d") == "d"
}

test_denial_reads_the_code_from_metadata if {
	lib.denial({"custom": {"code": "Foo"}}, "msg") == {"code": "Foo", "message": "msg"}
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
