# A complete deny in package tollgate.upgrade, where the embedded upgrade.rego defines deny as
# a partial set: the two conflict.
# expect: conflicting rules
package tollgate.upgrade

deny := {"code": "Bad", "message": "one denial"}
