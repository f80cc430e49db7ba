# A rule body that is never closed: the file ends inside the braces.
# expect: unexpected eof token
package tollgate.bad

deny contains d if {
	d := {"code": "Bad", "message": "never parsed"}
