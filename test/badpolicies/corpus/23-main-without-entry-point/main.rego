# A main.rego that replaces the embedded main/main.rego but defines no result: Tollgate would
# have nothing to query.
# expect: no rule defines data.tollgate.main.result
package tollgate.main

allowed := true
