# A main whose result is a string, not the decision object.
# expect-gate: policy result has the wrong shape
package tollgate.main

result := "allowed"
