# 300 denials, each with a 20 kB message and fifty 20 kB facts: hundreds of megabytes as JSON.
# It compiles; the result is refused before it is copied out, and the decision fails closed.
# expect-gate: the result is larger than
package tollgate.bad

_long := concat("", ["x" | some _ in numbers.range(1, 20000)])

deny contains {"code": sprintf("Huge%04d", [i]), "message": _long, "facts": [_long | some _ in numbers.range(1, 50)]} if some i in numbers.range(1, 300)
