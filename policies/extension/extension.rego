# METADATA
# description: |
#   The extension document (input.apiVersion tollgate.dev/extension/v1): one OLM v1
#   ClusterExtension and one candidate successor bundle from its ClusterCatalogs. The denials
#   hold the move of the ClusterExtension's version pin to the candidate: a selected catalog
#   that is not serving or could not be read, a deprecated candidate, an extension with nothing
#   installed or that OLM v1 has not settled, and its operands' health (the codes and wording of
#   tollgate.upgrade's). Every deny rule is guarded by `document`, so on a Subscription document
#   this package contributes nothing. Also the extension's conditions, state and upToDate.
package tollgate.extension

import data.tollgate.health
import data.tollgate.lib

# document holds for an extension document; tollgate.main collects this package's denials for
# such documents only, and every deny rule here checks it too.
document if lib.extension_document

# ----------------------------------------------------------------------------------------------
# What the rules read, with defaults: a missing object is null, a missing list [].

_extension := object.get(input, "extension", null)

_name := lib.name(_extension)

default _generation := 0

_generation := _extension.metadata.generation

_conditions := lib.conditions(_extension)

# _pin is spec.source.catalog.version ("" when unset: any version).
default _pin := ""

_pin := _extension.spec.source.catalog.version

_installed := object.get(input, "installed", null)

_installed_name := lib.get(_installed, ["name"], "")

_installed_version := lib.get(_installed, ["version"], "")

_candidate := object.get(input, "candidate", null)

_catalogs := object.get(input, "catalogs", [])

_catalog_errors := object.get(input, "catalogErrors", [])

# _subject names the installed operator in the health denials.
_subject := sprintf("%s (ClusterExtension %s)", [_installed_name, _name]) if {
	_installed_name != ""
} else := sprintf("ClusterExtension %s", [_name])

_narrow_selector := lib.remedy(
	sprintf("or an admin changes spec.source.catalog.selector of ClusterExtension %s so that it no longer selects the catalog (OLM v1 reads every catalog it selects):", [_name]),
	"kubectl edit clusterextension %s",
	[_name],
)

# ----------------------------------------------------------------------------------------------
# Catalogs. OLM v1 resolves from every ClusterCatalog the extension's selector selects and
# fails while one of them is not served, so a catalog that is not serving holds the move as
# long as OLM itself could not act on it; one whose content Tollgate could not read holds it
# because the candidates were not decided on all of it. Neither is ever overridden
# (tollgate.main). A catalog that is not serving is reported once, as CatalogNotServing, with
# what catalogErrors says of it as one more fact.

# _serving is the Serving condition of each catalog, by name (absent when it has none).
_serving[lib.name(c)] := s if {
	some c in _catalogs
	s := lib.condition(lib.conditions(c), "Serving")
}

_not_serving contains c if {
	some c in _catalogs
	not _serving[lib.name(c)].status == "True"
}

_not_serving_names := {lib.name(c) | some c in _not_serving}

_error_facts(name) := [sprintf("Tollgate could not read the content of ClusterCatalog %v: %v", [name, object.get(e, "message", "")]) |
	some e in _catalog_errors
	object.get(e, "catalog", "") == name
]

_serving_fact(name) := lib.condition_fact(sprintf("ClusterCatalog %s", [name]), c) if {
	c := _serving[name]
} else := sprintf("ClusterCatalog %s has no Serving condition yet", [name])

_serving_said(name) := sprintf("Serving=%v: %s", [object.get(c, "status", ""), lib.said(c)]) if {
	c := _serving[name]
} else := "no Serving condition yet"

_get_catalog(text, name) := lib.remedy(text, "kubectl get clustercatalog %s -o yaml", [name])

# METADATA
# title: A ClusterCatalog the ClusterExtension selects is not serving
# custom:
#   code: CatalogNotServing
deny contains denial if {
	document
	some c in _not_serving
	name := lib.name(c)
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"ClusterCatalog %s, which ClusterExtension %s selects, is not serving (%s): OLM v1 cannot resolve from it, and Tollgate cannot read which bundles it offers",
			[name, _name, _serving_said(name)],
		),
		array.concat([_serving_fact(name)], _error_facts(name)),
		[
			_get_catalog("catalogd serves the catalog (Serving=True) once it has unpacked its image; check the catalog's conditions:", name),
			_narrow_selector,
		],
	)
}

# METADATA
# title: The content of a ClusterCatalog the ClusterExtension selects could not be read
# custom:
#   code: CatalogUnreadable
deny contains denial if {
	document
	some e in _catalog_errors
	name := object.get(e, "catalog", "")
	not name in _not_serving_names
	message := object.get(e, "message", "")
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"the content of ClusterCatalog %v, which ClusterExtension %s selects, could not be read, so the successors were not decided on all of it: %v",
			[name, _name, message],
		),
		[sprintf("Tollgate could not read the content of ClusterCatalog %v: %v", [name, message])],
		[
			_get_catalog("catalogd serves the catalog's content at status.urls.base; check the catalog's status and that Tollgate reaches catalogd:", name),
			_narrow_selector,
		],
	)
}

# ----------------------------------------------------------------------------------------------
# The candidate: deprecation entries of its catalog that name its package, one of its channels,
# or the bundle itself. One denial lists them all.

_schema_word := {"olm.package": "package", "olm.channel": "channel", "olm.bundle": "bundle"}

_deprecations := object.get(_candidate, "deprecations", []) if is_object(_candidate)

else := []

_deprecation_fact(d) := sprintf("ClusterCatalog %v deprecates %s %v: %v", [
	object.get(_candidate, "catalog", ""),
	object.get(_schema_word, object.get(d, "schema", ""), object.get(d, "schema", "entry")),
	object.get(d, "name", ""),
	object.get(d, "message", ""),
])

# METADATA
# title: The candidate successor bundle is deprecated in its catalog
# custom:
#   code: BundleDeprecated
deny contains denial if {
	document
	count(_deprecations) > 0
	facts := [_deprecation_fact(d) | some d in _deprecations]
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("the successor %v (version %v) of ClusterExtension %s is deprecated: %s", [
			object.get(_candidate, "name", ""), object.get(_candidate, "version", ""), _name,
			concat("; ", facts),
		]),
		facts,
		[_get_catalog(
			"the catalog's maintainers publish a successor that is not deprecated (or withdraw the deprecation); the catalog's status says which image it serves:",
			object.get(_candidate, "catalog", ""),
		)],
	)
}

# ----------------------------------------------------------------------------------------------
# The ClusterExtension itself. Tollgate moves the version pin of installed extensions only: the
# first install is at the admin's pin. Never overridden (tollgate.main): a waiver would not make
# a successor of nothing.

# METADATA
# title: The ClusterExtension has no installed bundle
# custom:
#   code: ExtensionNotInstalled
deny contains denial if {
	document
	_installed == null
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf(
			"ClusterExtension %s has no installed bundle (status.install.bundle): Tollgate moves the version pin of installed extensions only, and the first install is at the admin's pin (spec.source.catalog.version)",
			[_name],
		),
		array.concat(
			[sprintf("ClusterExtension %s reports no status.install.bundle", [_name])],
			[lib.condition_fact(sprintf("ClusterExtension %s", [_name]), c) | c := lib.condition(_conditions, "Installed")],
		),
		[lib.remedy(
			"OLM v1 installs the bundle spec.source.catalog.version selects, and once it reports the bundle in status.install.bundle Tollgate decides its successors; its conditions say how far it got:",
			"kubectl get clusterextension %s -o yaml",
			[_name],
		)],
	)
}

# ExtensionProgressing: OLM v1 is still working on the extension. It has settled when it reports
# Installed=True and Progressing=True with reason Succeeded (what OLM v1 reports once the
# installed bundle is the one it resolved), every condition of a type OLM v1 writes was observed
# at the object's generation, and an exact version pin names the installed version. Conditions
# are read by type, the first of each; types OLM v1 does not write for a ClusterExtension are
# ignored.
_known_types := {"Installed", "Progressing", "Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated"}

_unsettled contains sprintf("ClusterExtension %s has no %s condition yet", [_name, t]) if {
	some t in ["Installed", "Progressing"]
	not lib.condition(_conditions, t)
}

_unsettled contains _fact(c) if {
	c := lib.condition(_conditions, "Installed")
	c.status != "True"
}

_unsettled contains _fact(c) if {
	c := lib.condition(_conditions, "Progressing")
	not _succeeded(c)
}

_unsettled contains sprintf("%s (observed at generation %v; the object is at generation %v)", [_fact(c), observed, _generation]) if {
	some t in _known_types
	c := lib.condition(_conditions, t)
	observed := object.get(c, "observedGeneration", 0)
	observed != _generation
}

_unsettled contains sprintf(
	"ClusterExtension %s pins version %v (spec.source.catalog.version), but its installed bundle %v is at version %v",
	[_name, _pin, _installed_name, _installed_version],
) if {
	_installed != null
	_exact(_pin)
	not _same_version(_pin, _installed_version)
}

_succeeded(c) if {
	c.status == "True"
	c.reason == "Succeeded"
}

_fact(c) := lib.condition_fact(sprintf("ClusterExtension %s", [_name]), c)

# _exact holds for a pin that names one version (a semantic version, with or without "v"), not
# a range.
_exact(pin) if semver.is_valid(trim_prefix(pin, "v"))

_same_version(a, b) if {
	semver.is_valid(trim_prefix(b, "v"))
	semver.compare(trim_prefix(a, "v"), trim_prefix(b, "v")) == 0
}

# METADATA
# title: OLM v1 has not settled the ClusterExtension
# custom:
#   code: ExtensionProgressing
deny contains denial if {
	document
	count(_unsettled) > 0
	facts := sort(_unsettled)
	denial := lib.explained(
		rego.metadata.rule(),
		sprintf("ClusterExtension %s is not settled, OLM v1 is still working on it: %s", [_name, concat("; ", facts)]),
		facts,
		[
			{"text": "wait until OLM v1 settles the ClusterExtension: Installed=True, Progressing=True with reason Succeeded, every condition observed at the current generation, the installed bundle at the pinned version"},
			lib.remedy(
				"if it does not, its conditions say what OLM v1 retries or is blocked on:",
				"kubectl get clusterextension %s -o yaml",
				[_name],
			),
		],
	)
}

# ----------------------------------------------------------------------------------------------
# Health of the operands: the codes and wording of tollgate.upgrade (tollgate.health.hold).

# METADATA
# title: An operand of the installed extension is degraded
# custom:
#   code: OperatorDegraded
deny contains denial if {
	document
	h := health.hold("Degraded", _subject)
	denial := lib.explained(rego.metadata.rule(), h.message, h.facts, h.lift)
}

# METADATA
# title: An operand of the installed extension is progressing
# custom:
#   code: OperatorProgressing
deny contains denial if {
	document
	h := health.hold("Progressing", _subject)
	denial := lib.explained(rego.metadata.rule(), h.message, h.facts, h.lift)
}

# ----------------------------------------------------------------------------------------------
# Conditions, state and upToDate of the extension (tollgate.main adds UpgradeBlocked).

conditions := [_catalogs_serving, _extension_installed]

_unreadable_names := sort({sprintf("%v", [object.get(e, "catalog", "")]) | some e in _catalog_errors} | _not_serving_names)

_catalogs_serving := {
	"type": "CatalogsServing", "status": "False", "reason": "NoCatalogSelected",
	"message": sprintf("the selector of ClusterExtension %s selects no ClusterCatalog", [_name]),
} if {
	count(_catalogs) == 0
} else := {
	"type": "CatalogsServing", "status": "False", "reason": "CatalogNotServing",
	"message": sprintf("not serving, or not readable: %s", [concat(", ", _unreadable_names)]),
} if {
	count(_unreadable_names) > 0
} else := {
	"type": "CatalogsServing", "status": "True", "reason": "AllCatalogsServing",
	"message": sprintf("every selected ClusterCatalog serves its content: %s", [concat(", ", sort([lib.name(c) | some c in _catalogs]))]),
}

_extension_installed := {
	"type": "ExtensionInstalled", "status": "False", "reason": "NotInstalled",
	"message": sprintf("ClusterExtension %s has no installed bundle", [_name]),
} if {
	_installed == null
} else := {
	"type": "ExtensionInstalled", "status": "True", "reason": "Progressing",
	"message": sprintf("%s is installed at version %v; OLM v1 is still working: %s", [_installed_name, _installed_version, sort(_unsettled)[0]]),
} if {
	count(_unsettled) > 0
} else := {
	"type": "ExtensionInstalled", "status": "True", "reason": "Installed",
	"message": sprintf("%s is installed at version %v", [_installed_name, _installed_version]),
}

# state: None without an installed bundle; UpgradeAvailable with a candidate successor;
# AtLatestKnown otherwise (the catalogs offer no successor the extension may move to).
state := "None" if {
	_installed == null
} else := "UpgradeAvailable" if {
	_candidate != null
} else := "AtLatestKnown"

up_to_date := state == "AtLatestKnown"
