# METADATA
# description: Reads the wall clock, which the manager refuses (decisions must replay).
package tollgate.packs.clock

# METADATA
# title: Too late in the day
# custom:
#   code: TooLate
deny contains {"code": rego.metadata.rule().custom.code, "message": "too late"} if {
	time.now_ns() > 0
}
