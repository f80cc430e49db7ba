# METADATA
# description: |
#   Small helpers shared by the Tollgate packages: safe field access on objects that may be
#   null, condition lookup by type, object names, RFC 3339 time parsing, the denial shape with
#   its facts and remedies.
package tollgate.lib

# get is object.get that also accepts null (or any non-object) and then yields the default:
# the input document uses null for missing objects.
get(obj, path, default_value) := object.get(obj, path, default_value) if {
	is_object(obj)
} else := default_value

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
# The string is validated before time.parse_rfc3339_ns sees it, so a missing, empty or garbled
# time never raises a built-in error (the engine fails closed on any built-in error): the
# pattern accepts only real calendar dates (leap years included), hours 00-23, minutes and
# seconds 00-59, and offsets up to ±23:59; the year range is what nanoseconds since the epoch
# can hold (1678-2261). Anything else is 0, as if absent.
time_ns(ts) := time.parse_rfc3339_ns(ts) if {
	rfc3339(ts)
} else := 0

# rfc3339 holds for a string that time.parse_rfc3339_ns parses without error (see time_ns).
rfc3339(ts) if {
	is_string(ts)
	ts >= "1678"
	ts < "2262"
	regex.match(_rfc3339, ts)
}

_rfc3339 := `^([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`

# denial is the shape of a denial without facts or remedies of its own (lib.explained with []
# and []): tollgate.main then gives it the default remedy. The code comes from the rule's
# annotations (METADATA custom.code), read with rego.metadata.rule(), so it lives in one place.
denial(metadata, message) := explained(metadata, message, [], [])

# explained is the shape every deny rule produces: the code from the rule's annotations
# (METADATA custom.code); the METADATA title, when the rule has one, which names the exact rule that
# denied (several rules may share a code; the engine points the denial's source at it); the
# message; the facts the denial rests on (one sentence each, for a person); and lift, the ways
# to lift it, in order, each a remedy {"text", "command"?, "subscription"?} (see
# policies/README.md). tollgate.main appends the UpgradeGate override as the last remedy where an
# override lifts the hold, so a rule never offers it itself.
explained(metadata, message, facts, lift) := {
	"code": metadata.custom.code, "title": metadata.title, "message": message,
	"facts": facts, "lift": lift,
} if {
	is_string(metadata.title)
} else := {"code": metadata.custom.code, "message": message, "facts": facts, "lift": lift}

# remedy is {"text": text, "command": sprintf(format, words)}, a command to paste, when every
# word is a plain Kubernetes name (see plain_name), so the command is safe to paste whatever the
# objects hold; otherwise the text alone, without its trailing ":".
remedy(text, format, words) := {"text": text, "command": sprintf(format, words)} if {
	every w in words {
		plain_name(w)
	}
} else := {"text": trim_suffix(text, ":")}

# plain_name holds for a DNS-1123 subdomain (lowercase letters, digits, "-" and "."): what
# Kubernetes accepts as the name of a namespace, a Subscription, a CatalogSource or an
# OperatorCondition, and nothing a shell would interpret.
plain_name(s) if {
	is_string(s)
	regex.match(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`, s)
}

# said is a condition's message, else its reason, with the reason alongside, for facts:
# "migrating storage (reason Migrating)".
said(c) := sprintf("%s (reason %s)", [c.message, c.reason]) if {
	_text(c, "message")
	_text(c, "reason")
} else := c.message if {
	_text(c, "message")
} else := sprintf("reason %s", [c.reason]) if {
	_text(c, "reason")
} else := "no message"

_text(c, key) if {
	is_string(c[key])
	c[key] != ""
}

# condition_fact states condition c of subject as the policies read it, its time as given (left
# out when there is none): "OperatorCondition etcd.v0.9.2: Upgradeable=False since
# 2026-11-22T01:07:11Z: migrating storage (reason Migrating)".
condition_fact(subject, c) := sprintf("%s: %v=%v%s: %s", [
	subject, object.get(c, "type", ""), object.get(c, "status", ""),
	_since(c), said(c),
])

_since(c) := sprintf(" since %s", [c.lastTransitionTime]) if _text(c, "lastTransitionTime")

else := ""

# extension_document holds for an extension document (input.apiVersion
# "tollgate.dev/extension/v1", policies/README.md), which is about a ClusterExtension and one
# candidate successor bundle instead of a Subscription. tollgate.main.extension_input_version
# names the same version.
extension_document if input.apiVersion == "tollgate.dev/extension/v1"

# ----------------------------------------------------------------------------------------------
# Facts about the input document, computed once per evaluation (rules, not functions, so OPA
# caches them). Each reads the field directly and falls back to a default, which is what get()
# does for a null or missing object.

# installed_csv_name is the CSV OLM reports as installed ("" on a first install).
default installed_csv_name := ""

installed_csv_name := input.subscription.status.installedCSV

# checked_csv_name is the CSV being replaced, whose OperatorCondition and operands an upgrade
# must respect: the installed CSV, or, when a recreated Subscription reports none, the CSV its
# pending plan replaces (input.replacedCSV), which OLM itself checks after approval ("" on a
# first install).
default checked_csv_name := ""

checked_csv_name := installed_csv_name if {
	installed_csv_name != ""
} else := input.replacedCSV.metadata.name

# checked_csv is that CSV's object (null when it is missing, or on a first install).
default checked_csv := null

checked_csv := input.installedCSV if {
	installed_csv_name != ""
} else := input.replacedCSV

# checked_csv_phase is status.phase of checked_csv ("" when it is missing).
default checked_csv_phase := ""

checked_csv_phase := checked_csv.status.phase

# current_csv_name is the CSV the Subscription is progressing to ("" before resolution).
default current_csv_name := ""

current_csv_name := input.subscription.status.currentCSV

# global_catalog_namespace is where catalogs visible to every namespace live.
default global_catalog_namespace := "olm"

global_catalog_namespace := input.config.globalCatalogNamespace

# csv_phase is status.phase of the installed CSV ("" when it is missing).
default csv_phase := ""

csv_phase := input.installedCSV.status.phase

# source_namespace is the Subscription's spec.sourceNamespace ("" when unset).
default source_namespace := ""

source_namespace := input.subscription.spec.sourceNamespace

# subscription_namespace is the Subscription's own namespace ("" when unknown).
default subscription_namespace := ""

subscription_namespace := input.subscription.metadata.namespace

# source_name is the Subscription's spec.source ("" when unset).
default source_name := ""

source_name := input.subscription.spec.source

# source_catalog_key is the "namespace/name" the Subscription's spec.source points at.
source_catalog_key := sprintf("%s/%s", [source_namespace, source_name])

# join_names is a sorted, comma-separated list for messages.
join_names(names) := concat(", ", sort(names))

# catalogs are the catalogs visible to the Subscription (input.catalogSources) plus its source
# catalog when that lives elsewhere, one per namespace/name, sorted by namespace/name.
catalogs := [cs | some [_, _, _, _, cs] in catalog_entries]

# catalog_entries are lib.catalogs with what every package reads of them, computed once, as
# rows [key ("namespace/name"), namespace, name, state (lastObservedState, "" when absent),
# catalog]. A reader takes a row apart by pattern (some [key, ns, n, state, cs] in ...), which
# costs no expression per field where looking a field up costs one per catalog. Sorting
# [key, position] and keeping the first of each key keeps the first copy, so a catalog in
# catalogSources wins over the same sourceCatalog.
catalog_entries := [[key, ns, n, state, cs] |
	some j, [key, _, ns, n, state, cs] in sorted
	not sorted[j - 1][0] == key
] if {
	sorted := _catalog_sorted
}

_all_catalogs := array.concat(
	object.get(input, "catalogSources", []),
	[c | c := input.sourceCatalog; c != null],
)

# _catalog_sorted are [key, position, namespace, name, state, catalog], sorted. Lookups go
# through root so that a catalog that is not an object reads as defaults instead of raising a
# built-in error; the rules the loop reads are bound to variables first, which costs less than
# a rule lookup per catalog.
_catalog_sorted := sort([[sprintf("%s/%s", [ns, n]), i, ns, n, state, cs] |
	some i, cs in listed
	ns := object.get(root, ["all", i, "metadata", "namespace"], "")
	n := object.get(root, ["all", i, "metadata", "name"], "")
	state := object.get(root, ["all", i, "status", "connectionState", "lastObservedState"], "")
]) if {
	listed := _all_catalogs
	root := {"all": listed}
}

# is_source_catalog is true for the catalog the Subscription's spec.source names.
is_source_catalog(cs) := namespaced_name(cs) == source_catalog_key

# or_else is s, or d when s is absent from a lookup, not a string, or "".
or_else(s, d) := s if {
	is_string(s)
	s != ""
} else := d
