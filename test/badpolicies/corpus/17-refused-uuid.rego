# A fresh UUID on every evaluation.
# expect: uuid.rfc4122 is not allowed
package tollgate.bad

x := uuid.rfc4122("k")
