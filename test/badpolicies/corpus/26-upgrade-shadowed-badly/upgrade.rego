# An upgrade.rego that replaces the embedded upgrade/upgrade.rego with a syntax error: the
# embedded rules it replaces must not vanish silently.
# expect: unexpected eof token
package tollgate.upgrade

deny contains d if {
