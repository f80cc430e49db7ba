# Reading the clock instead of input.now.
# expect: time.now_ns is not allowed in Tollgate policies
package tollgate.bad

deny contains {"code": "Late", "message": "m"} if time.now_ns() > 0
