# A built-in called with an argument of the wrong type (a number where count wants a
# collection): the type checker refuses it.
# expect: count: invalid argument(s)
package tollgate.bad

deny contains {"code": "Bad", "message": "m"} if count(42) > 0
