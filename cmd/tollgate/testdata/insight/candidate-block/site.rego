# METADATA
# description: A site rule under review, holding team-b until its change ticket is approved.
package tollgate.packs.site

# METADATA
# title: team-b needs an approved change ticket
# custom:
#   code: ChangeTicketMissing
deny contains {"code": rego.metadata.rule().custom.code, "message": "team-b upgrades need an approved change ticket"} if {
	input.subscription.metadata.namespace == "team-b"
}
