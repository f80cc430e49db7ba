# A main.rego that replaces the embedded main but declares another package: the entry point
# is gone.
# expect: no rule defines data.tollgate.main.result
package tollgate.notmain

result := {}
