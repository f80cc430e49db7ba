package tollgate.catalogsource_test

import data.tollgate.catalogsource
import data.tollgate.fixtures_test as f

_cs(spec) := {"metadata": {"namespace": "olm", "name": "c"}, "spec": spec}

_fields(spec) := {v.field | some v in catalogsource.violations(_cs(spec))}

_message(spec, field) := [v.message | some v in catalogsource.violations(_cs(spec)); v.field == field][0]

# --- valid specs

test_catalog_image_source_is_valid if catalogsource.valid(_cs({"catalogImageSource": {"catalogImage": "quay.io/x/y:1"}}))

test_catalog_image_source_with_pod_spec_overrides_is_valid if {
	catalogsource.valid(_cs({"catalogImageSource": {
		"catalogImage": "quay.io/x/y:1",
		"podSpecOverrides": {"nodeSelector": {"kubernetes.io/os": "linux"}},
	}}))
}

test_catalog_service_source_is_valid if catalogsource.valid(_cs({"catalogServiceSource": {"address": "reg.ns.svc:50051"}}))

test_config_map_source_is_valid if catalogsource.valid(_cs({"configMapSource": {"configMap": "cm"}}))

test_legacy_grpc_image_is_valid if catalogsource.valid(_cs({"sourceType": "grpc", "image": "quay.io/x/y:1"}))

test_legacy_grpc_image_with_grpc_pod_config_is_valid if {
	catalogsource.valid(_cs({"sourceType": "grpc", "image": "quay.io/x/y:1", "grpcPodConfig": {"nodeSelector": {"a": "b"}}}))
}

test_legacy_grpc_address_is_valid if catalogsource.valid(_cs({"sourceType": "grpc", "address": "reg:50051"}))

test_legacy_configmap_is_valid if catalogsource.valid(_cs({"sourceType": "configmap", "configMap": "cm"}))

test_legacy_internal_is_valid if catalogsource.valid(_cs({"sourceType": "internal", "configMap": "cm"}))

test_metadata_only_fields_do_not_matter if {
	catalogsource.valid(_cs({"catalogImageSource": {"catalogImage": "i"}, "displayName": "X", "publisher": "Y", "priority": 10}))
}

# Each shape _plainly_valid settles without the rules must be one the rules find valid too.
test_every_plain_shape_is_valid_by_the_rules if {
	every spec in [
		{"catalogImageSource": {"catalogImage": "i"}},
		{"catalogServiceSource": {"address": "reg:50051"}},
		{"configMapSource": {"configMap": "cm"}},
		{"sourceType": "grpc", "image": "i"},
		{"sourceType": "grpc", "image": "i", "grpcPodConfig": {"nodeSelector": {"a": "b"}}},
		{"sourceType": "grpc", "address": "reg:50051"},
		{"sourceType": "configmap", "configMap": "cm"},
		{"sourceType": "internal", "configMap": "cm"},
	] {
		catalogsource._plainly_valid(spec)
		count((((catalogsource._count_violations(spec) | catalogsource._required_violations(spec)) | catalogsource._legacy_violations(spec)) | catalogsource._pod_config_violations(spec))) == 0
	}
}

test_a_legacy_spec_with_a_wrong_type_is_not_plain if {
	not catalogsource._plainly_valid({"sourceType": "configmap", "image": "i"})
	_fields({"sourceType": "configmap", "image": "i"}) == {"spec.configMap", "spec.image"}
}

# --- exactly one source

test_no_source_is_invalid if {
	_fields({}) == {"spec"}
	contains(_message({}, "spec"), "set exactly one of spec.catalogImageSource.catalogImage")
}

test_a_catalog_without_spec_is_invalid if {
	{v.field | some v in catalogsource.violations({"metadata": {"name": "c"}})} == {"spec"}
}

test_two_structured_sources_are_invalid if {
	spec := {"catalogImageSource": {"catalogImage": "i"}, "configMapSource": {"configMap": "cm"}}
	_fields(spec) == {"spec"}
	_message(spec, "spec") == "spec.catalogImageSource, spec.configMapSource are set together, but a CatalogSource serves from exactly one source: keep one and remove the others"
}

test_structured_and_legacy_sources_are_invalid if {
	spec := {"catalogServiceSource": {"address": "a:1"}, "sourceType": "grpc", "image": "i"}
	_fields(spec) == {"spec"}
	contains(_message(spec, "spec"), "spec.catalogServiceSource, spec.sourceType")
}

# --- required fields of structured sources

test_catalog_image_source_needs_an_image if {
	spec := {"catalogImageSource": {"podSpecOverrides": {"priorityClassName": "p"}}}
	_fields(spec) == {"spec.catalogImageSource.catalogImage"}
	contains(_message(spec, "spec.catalogImageSource.catalogImage"), "operator-registry image")
}

test_catalog_service_source_needs_an_address if _fields({"catalogServiceSource": {}}) == {"spec.catalogServiceSource.address"}

test_config_map_source_needs_a_config_map if _fields({"configMapSource": {"configMap": ""}}) == {"spec.configMapSource.configMap"}

# --- legacy sourceType

test_unknown_source_type_is_invalid if {
	_fields({"sourceType": "http", "image": "i"}) == {"spec.sourceType"}
	contains(_message({"sourceType": "http"}, "spec.sourceType"), "use grpc, configmap or internal")
}

test_grpc_without_image_or_address_is_invalid if {
	_fields({"sourceType": "grpc"}) == {"spec.address"}
	contains(_message({"sourceType": "grpc"}, "spec.address"), "needs spec.address or spec.image")
}

test_configmap_without_config_map_is_invalid if _fields({"sourceType": "configmap"}) == {"spec.configMap"}

test_grpc_with_image_and_address_is_invalid if {
	spec := {"sourceType": "grpc", "image": "i", "address": "a:1"}
	_fields(spec) == {"spec.address"}
	contains(_message(spec, "spec.address"), "ignored because spec.image is also set")
}

test_grpc_with_a_config_map_is_invalid if {
	spec := {"sourceType": "grpc", "image": "i", "configMap": "cm"}
	_fields(spec) == {"spec.configMap"}
	_message(spec, "spec.configMap") == "is not used with spec.sourceType grpc: remove it"
}

test_configmap_with_an_image_is_invalid if _fields({"sourceType": "configmap", "configMap": "cm", "image": "i"}) == {"spec.image"}

test_legacy_field_without_source_type_is_invalid if {
	_fields({"image": "i"}) == {"spec.image"}
	contains(_message({"image": "i"}, "spec.image"), "spec.sourceType is not")
	contains(_message({"image": "i"}, "spec.image"), "spec.catalogImageSource.catalogImage")
	contains(_message({"configMap": "cm"}, "spec.configMap"), "spec.configMapSource.configMap")
	contains(_message({"address": "a"}, "spec.address"), "spec.catalogServiceSource.address")
}

test_legacy_field_beside_a_structured_source_is_invalid if {
	spec := {"catalogImageSource": {"catalogImage": "i"}, "image": "old"}
	_fields(spec) == {"spec.image"}
	_message(spec, "spec.image") == "is deprecated and conflicts with spec.catalogImageSource: remove it"
}

# --- pod configuration

test_grpc_pod_config_with_catalog_image_source_is_invalid if {
	spec := {"catalogImageSource": {"catalogImage": "i"}, "grpcPodConfig": {"nodeSelector": {"a": "b"}}}
	_fields(spec) == {"spec.grpcPodConfig"}
	contains(_message(spec, "spec.grpcPodConfig"), "move it to spec.catalogImageSource.podSpecOverrides")
}

test_grpc_pod_config_with_grpc_address_is_invalid if {
	spec := {"sourceType": "grpc", "address": "a:1", "grpcPodConfig": {"priorityClassName": "p"}}
	_fields(spec) == {"spec.grpcPodConfig"}
	contains(_message(spec, "spec.grpcPodConfig"), "remove it")
}

# --- validation over the input

test_validation_lists_every_visible_catalog if {
	v := catalogsource.validation with input as f.with_patch({"catalogSources": [
		f.catalog("olm", "operatorhubio", "READY"),
		object.union(f.catalog("operators", "broken", "READY"), {"spec": {"configMapSource": {"configMap": "cm"}}}),
	]})
	[[e.namespace, e.name, e.valid] | some e in v] == [["olm", "operatorhubio", true], ["operators", "broken", false]]
	[x.field | some x in v[1].violations] == ["spec"]
}
