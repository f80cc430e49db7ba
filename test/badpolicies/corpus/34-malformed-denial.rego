# A denial without a code or a message.
# expect-gate: package tollgate.bad produced a denial without a string code and message
package tollgate.bad

deny contains {"reason": "no code"}
