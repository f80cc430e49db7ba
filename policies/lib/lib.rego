# METADATA
# description: |
#   Small helpers shared by the Tollgate packages: safe field access on objects that may be
#   null, condition lookup by type, object names, RFC 3339 time parsing, the denial shape.
package tollgate.lib

# get is object.get that also accepts null (or any non-object) and then yields the default:
# the input document uses null for missing objects.
get(obj, path, default_value) := object.get(obj, path, default_value) if is_object(obj)

get(obj, _, default_value) := default_value if not is_object(obj)

# condition is the first condition of type t in conds; undefined when there is none.
condition(conds, t) := [c | some c in conds; c.type == t][0]

# conditions are the status.conditions of obj, [] when obj or the list is missing.
conditions(obj) := get(obj, ["status", "conditions"], [])

# name is metadata.name of obj ("" when unknown).
name(obj) := get(obj, ["metadata", "name"], "")

# namespaced_name is "namespace/name" of obj.
namespaced_name(obj) := sprintf("%s/%s", [get(obj, ["metadata", "namespace"], ""), name(obj)])

# kind_name is "Kind namespace/name" of obj, for messages.
kind_name(obj) := sprintf("%s %s", [get(obj, ["kind"], "object"), namespaced_name(obj)])

# time_ns is an RFC 3339 timestamp in nanoseconds since the epoch; 0 when absent or unparseable.
time_ns(ts) := ns if {
	is_string(ts)
	ns := time.parse_rfc3339_ns(ts)
} else := 0

# denial is the shape every deny rule produces: the code comes from the rule's METADATA
# (custom.code), read with rego.metadata.rule(), so it lives in one place.
denial(metadata, message) := {"code": metadata.custom.code, "message": message}

# installed_csv_name is the CSV OLM reports as installed ("" on a first install).
installed_csv_name := get(input.subscription, ["status", "installedCSV"], "")

# current_csv_name is the CSV the Subscription is progressing to ("" before resolution).
current_csv_name := get(input.subscription, ["status", "currentCSV"], "")

# global_catalog_namespace is where catalogs visible to every namespace live.
global_catalog_namespace := get(input.config, ["globalCatalogNamespace"], "olm")

# csv_phase is status.phase of the installed CSV ("" when it is missing).
csv_phase := get(input.installedCSV, ["status", "phase"], "")

# source_catalog_key is the "namespace/name" the Subscription's spec.source points at.
source_catalog_key := sprintf("%s/%s", [
	get(input.subscription, ["spec", "sourceNamespace"], ""),
	get(input.subscription, ["spec", "source"], ""),
])

# join_names is a sorted, comma-separated list for messages.
join_names(names) := concat(", ", sort(names))

# catalogs are the catalogs visible to the Subscription (input.catalogSources) plus its source
# catalog when that lives elsewhere, one per namespace/name, sorted by namespace/name.
catalogs := [cs |
	some key in sort({namespaced_name(c) | some c in _all_catalogs})
	cs := [c | some c in _all_catalogs; namespaced_name(c) == key][0]
]

_all_catalogs := array.concat(
	object.get(input, "catalogSources", []),
	[c | c := input.sourceCatalog; c != null],
)

# is_source_catalog is true for the catalog the Subscription's spec.source names.
is_source_catalog(cs) := namespaced_name(cs) == source_catalog_key

# or_else is s, or d when s is absent from a lookup, not a string, or "".
or_else(s, d) := s if {
	is_string(s)
	s != ""
} else := d
