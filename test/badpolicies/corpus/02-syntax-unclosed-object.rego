# An object literal whose closing brace is missing (the mistake of README's first example):
# the rule's closing brace closes the object, and the file ends inside the rule body.
# expect: unexpected eof token
package tollgate.bad

deny contains d if {
	input.subscription.metadata.name == "etcd"
	d := {"code": "Bad", "message": "etcd needs a ticket"
}
