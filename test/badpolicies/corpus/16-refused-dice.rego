# A random decision.
# expect: rand.intn is not allowed
package tollgate.bad

deny contains {"code": "Dice", "message": "m"} if rand.intn("x", 2) == 0
