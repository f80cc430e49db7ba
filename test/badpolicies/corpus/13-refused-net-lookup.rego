# A DNS lookup.
# expect: net.lookup_ip_addr is not allowed
package tollgate.bad

x := net.lookup_ip_addr("example.com")
