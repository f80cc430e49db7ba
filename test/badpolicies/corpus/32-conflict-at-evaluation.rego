# Two complete rules that both apply and disagree: the conflict only shows when evaluated.
# expect-gate: eval_conflict_error: rule data.tollgate.bad.x produced conflicting values
package tollgate.bad

x := 1 if input.subscription

x := 2 if input.now

deny contains {"code": "Bad", "message": "m"} if x == 1
