# A deny in a package main never collects from.
# expect: data.tollgate.packs.acme.window.deny is never collected
package tollgate.packs.acme.window

deny contains {"code": "AcmeWindow", "message": "m"}
