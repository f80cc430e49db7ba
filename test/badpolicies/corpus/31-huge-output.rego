# 100 denials, each with a 20 kB message and twenty 20 kB facts: over 40 MB as JSON, five times
# the cap. The strings and the list of facts are built once and shared, so the policy is quick
# to evaluate and only its result is huge: the result is refused before it is copied out, and
# the decision fails closed.
# expect-gate: the result is larger than
package tollgate.bad

_kilobyte := concat("", ["x" | some _ in numbers.range(1, 1000)])

_long := concat("", [_kilobyte | some _ in numbers.range(1, 20)])

_facts := [_long | some _ in numbers.range(1, 20)]

deny contains {"code": sprintf("Huge%04d", [i]), "message": _long, "facts": _facts} if some i in numbers.range(1, 100)
