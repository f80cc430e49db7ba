# The same name defined both as a complete rule and as a partial set.
# expect: conflicting rules
package tollgate.bad

x := 1

x contains 2
