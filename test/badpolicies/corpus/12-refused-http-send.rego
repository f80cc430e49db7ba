# A policy that asks the network before it decides.
# expect: http.send is not allowed in Tollgate policies
package tollgate.bad

deny contains {"code": "Leak", "message": "m"} if {
	http.send({"method": "GET", "url": "http://example.com"}).status_code == 200
}
