# METADATA
# description: A site's change freeze, for one namespace.
package tollgate.packs.sitefreeze

import data.tollgate.lib

# METADATA
# title: The namespace is frozen
# custom:
#   code: ChangeFreeze
deny contains {"code": rego.metadata.rule().custom.code, "message": msg} if {
	lib.subscription_namespace == "team-f"
	msg := sprintf("%s is frozen until 2026-12-01", [lib.subscription_namespace])
}
