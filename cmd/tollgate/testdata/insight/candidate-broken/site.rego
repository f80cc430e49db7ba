package tollgate.packs.site

deny contains {"code": "X", "message": "y"} if {
	input.subscription.metadata.namespace ==
}
