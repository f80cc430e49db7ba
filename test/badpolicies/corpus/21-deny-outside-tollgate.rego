# A deny outside tollgate.*.
# expect: data.acme.deny is never collected
package acme

deny contains {"code": "Acme", "message": "m"}
