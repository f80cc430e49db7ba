# METADATA
# description: |
#   Validity of a CatalogSource spec (catalogsource-spec-update.md): exactly one source —
#   spec.catalogImageSource, spec.catalogServiceSource, spec.configMapSource, or the deprecated
#   spec.sourceType with its matching field — with messages that name the fields and say what to
#   do, instead of the API server's "must validate one and only one schema".
package tollgate.catalogsource

import data.tollgate.lib

# violations is the set of {field, message} that make one CatalogSource invalid; empty when valid.
# The common cases, one source with the field it requires and none of the fields the other
# rules look at, are settled by one lookup (_plainly_valid).
violations(cs) := set() if {
	_plainly_valid(cs.spec)
} else := ((_count_violations(spec) | _required_violations(spec)) | _legacy_violations(spec)) | _pod_config_violations(spec) if {
	spec := lib.get(cs, ["spec"], {})
}

# _plainly_valid holds for a spec whose checked fields (by key) and sourceType (null when absent)
# are one of the shapes of _plain_shapes, with the field that shape requires set. Every other
# spec, valid or not, goes through the rules below.
_plainly_valid(spec) if {
	is_object(spec)

	# The fields a violation can be about (a literal: a rule would cost a lookup per call).
	checked := object.keys(spec) & {
		"catalogImageSource", "catalogServiceSource", "configMapSource", "sourceType",
		"image", "address", "configMap", "grpcPodConfig",
	}
	required := object.get(_plain_shapes, [checked, object.get(spec, "sourceType", null)], null)
	not object.get(spec, required, null) in {null, ""}
}

# The valid shapes, by the checked fields present and then by sourceType: a structured source
# alone, or a legacy sourceType with one field it uses (and spec.grpcPodConfig beside a grpc
# image); each gives the path of its required field. (A spec that is no such shape gets null,
# which names no field of a spec: input keys are strings.)
_plain_shapes := {
	{"catalogImageSource"}: {null: ["catalogImageSource", "catalogImage"]},
	{"catalogServiceSource"}: {null: ["catalogServiceSource", "address"]},
	{"configMapSource"}: {null: ["configMapSource", "configMap"]},
	{"sourceType", "image"}: {"grpc": ["image"]},
	{"sourceType", "image", "grpcPodConfig"}: {"grpc": ["image"]},
	{"sourceType", "address"}: {"grpc": ["address"]},
	{"sourceType", "configMap"}: {"configmap": ["configMap"], "internal": ["configMap"]},
}

# catalog_violations are the violations of each of lib.catalogs, in the same order.
catalog_violations := [violations(cs) | some cs in lib.catalogs]

# source_violations are the violations of the Subscription's source catalog (input.sourceCatalog).
source_violations := violations(input.sourceCatalog)

# validation is one entry per catalog visible to the Subscription (lib.catalogs).
validation := [{
	"namespace": ns,
	"name": n,
	"valid": found == set(),
	"violations": sort(found),
} |
	some i, [_, ns, n, _, _] in lib.catalog_entries
	found := by_catalog[i]
] if {
	by_catalog := catalog_violations
}

# valid is true for a CatalogSource without violations.
valid(cs) := count(violations(cs)) == 0

# The structured sources and the field each one requires.
_structured := {
	"catalogImageSource": "catalogImage",
	"catalogServiceSource": "address",
	"configMapSource": "configMap",
}

_structured_hint := {
	"catalogImageSource": "an operator-registry image, e.g. quay.io/operatorhubio/catalog:latest",
	"catalogServiceSource": "host:port of a running registry service",
	"configMapSource": "the name of a ConfigMap in the catalog's namespace",
}

# The deprecated top-level fields, which legacy sourceType each belongs to, and where it moved.
_legacy_fields := ["image", "address", "configMap"]

_legacy_allowed := {
	"grpc": {"image", "address"},
	"configmap": {"configMap"},
	"internal": {"configMap"},
}

_legacy_fix := {
	"image": "set spec.sourceType: grpc, or better move it to spec.catalogImageSource.catalogImage",
	"address": "set spec.sourceType: grpc, or better move it to spec.catalogServiceSource.address",
	"configMap": "set spec.sourceType: configmap, or better move it to spec.configMapSource.configMap",
}

_set(spec, field) if not object.get(spec, field, null) in {null, ""}

# The sources a spec names: each structured source present, and "sourceType" when set.
_sources(spec) := {s |
	some s in ["catalogImageSource", "catalogServiceSource", "configMapSource", "sourceType"]
	_set(spec, s)
}

_legacy_used(spec) := {f | some f in _legacy_fields; _set(spec, f)}

_count_violations(spec) := {v |
	count(_sources(spec)) == 0
	count(_legacy_used(spec)) == 0
	v := {
		"field": "spec",
		"message": concat("", [
			"no catalog source is configured: set exactly one of ",
			"spec.catalogImageSource.catalogImage (a registry image), ",
			"spec.catalogServiceSource.address (host:port of a running registry) or ",
			"spec.configMapSource.configMap (a ConfigMap name)",
		]),
	}
} | {v |
	count(_sources(spec)) > 1
	v := {
		"field": "spec",
		"message": sprintf(
			"%s are set together, but a CatalogSource serves from exactly one source: keep one and remove the others",
			[concat(", ", [sprintf("spec.%s", [s]) | some s in sort(_sources(spec))])],
		),
	}
}

_required_violations(spec) := {v |
	some source, field in _structured
	_set(spec, source)
	not _set(spec[source], field)
	v := {
		"field": sprintf("spec.%s.%s", [source, field]),
		"message": sprintf("is required when spec.%s is set: give %s", [source, _structured_hint[source]]),
	}
}

_legacy_violations(spec) := ((_legacy_type_violations(spec) | _legacy_missing_violations(spec)) | _legacy_extra_violations(spec)) | _legacy_untyped_violations(spec)

# spec.sourceType names an unknown type.
_legacy_type_violations(spec) := {v |
	_set(spec, "sourceType")
	not _legacy_allowed[spec.sourceType]
	v := {
		"field": "spec.sourceType",
		"message": sprintf(
			"is %q, which OLM does not know: use grpc, configmap or internal — or better remove it and use spec.catalogImageSource, spec.catalogServiceSource or spec.configMapSource",
			[spec.sourceType],
		),
	}
}

# spec.sourceType is set without a field it can use.
_legacy_missing_violations(spec) := {v |
	allowed := _legacy_allowed[spec.sourceType]
	count(_legacy_used(spec) & allowed) == 0
	v := {
		"field": sprintf("spec.%s", [sort(allowed)[0]]),
		"message": sprintf(
			"spec.sourceType %s needs %s: set it — or better remove spec.sourceType and use a structured source",
			[spec.sourceType, concat(" or ", [sprintf("spec.%s", [f]) | some f in sort(allowed)])],
		),
	}
}

# spec.sourceType is set with fields it does not use, or with two that compete.
_legacy_extra_violations(spec) := {v |
	allowed := _legacy_allowed[spec.sourceType]
	some f in (_legacy_used(spec) - allowed)
	v := {
		"field": sprintf("spec.%s", [f]),
		"message": sprintf("is not used with spec.sourceType %s: remove it", [spec.sourceType]),
	}
} | {v |
	spec.sourceType == "grpc"
	_set(spec, "image")
	_set(spec, "address")
	v := {
		"field": "spec.address",
		"message": "is ignored because spec.image is also set (OLM runs the image and never dials the address): remove one of them",
	}
}

# Deprecated fields without spec.sourceType.
_legacy_untyped_violations(spec) := {v |
	not _set(spec, "sourceType")
	some f in _legacy_used(spec)
	v := _untyped(spec, f)
}

_untyped(spec, f) := {
	"field": sprintf("spec.%s", [f]),
	"message": sprintf("is deprecated and conflicts with %s: remove it", [concat(", ", structured)]),
} if {
	structured := [sprintf("spec.%s", [s]) | some s in sort(_sources(spec))]
	count(structured) > 0
} else := {
	"field": sprintf("spec.%s", [f]),
	"message": sprintf("is set but spec.sourceType is not, so OLM ignores it: %s", [_legacy_fix[f]]),
}

# spec.grpcPodConfig only configures the pod OLM runs for a legacy grpc image.
_pod_config_violations(spec) := {v |
	_set(spec, "grpcPodConfig")
	not _legacy_grpc_image(spec)
	v := {"field": "spec.grpcPodConfig", "message": _pod_config_message(spec)}
}

_legacy_grpc_image(spec) if {
	spec.sourceType == "grpc"
	_set(spec, "image")
}

_pod_config_message(spec) := "is only used with the deprecated spec.sourceType grpc and spec.image: with spec.catalogImageSource, move it to spec.catalogImageSource.podSpecOverrides" if {
	_set(spec, "catalogImageSource")
} else := "is only used with spec.sourceType grpc and spec.image, where OLM runs the registry pod it configures: remove it"
