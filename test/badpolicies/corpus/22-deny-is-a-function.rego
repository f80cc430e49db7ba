# A deny that is a function, which main cannot collect.
# expect: is a function
package tollgate.bad

deny(x) := {"code": x, "message": x}
