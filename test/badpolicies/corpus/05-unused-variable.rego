# An assigned variable that is never used, which strict mode refuses.
# expect: assigned var y unused
package tollgate.bad

x if {
	y := 1
	input.subscription
}
