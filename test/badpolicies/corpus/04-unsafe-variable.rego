# A denial whose variable is only compared, never bound: d is unsafe.
# expect: var d is unsafe
package tollgate.bad

deny contains d if {
	d.code == "Bad"
}
