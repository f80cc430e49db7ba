# A deny whose body takes far longer than the evaluation deadline (10^10 pairs). It compiles,
# so it goes in service; every decision then fails closed.
# expect-gate: policy evaluation exceeded its deadline
package tollgate.bad

deny contains {"code": "Slow", "message": "m"} if {
	count([1 | some i in numbers.range(1, 100000); some j in numbers.range(1, 100000); i == j + 1]) < 0
}
