# A function that calls itself.
# expect: is recursive
package tollgate.bad

f(x) := f(x)

deny contains {"code": "Bad", "message": "m"} if f(1)
