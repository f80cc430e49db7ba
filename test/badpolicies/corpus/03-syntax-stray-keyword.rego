# A rule head with a stray keyword where its name should be.
# expect: unexpected if keyword: expected rule key term
package tollgate.bad

deny contains if {
	true
}
