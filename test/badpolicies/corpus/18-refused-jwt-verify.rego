# A JWT check, which reads the clock.
# expect: io.jwt.decode_verify is not allowed
package tollgate.bad

x := io.jwt.decode_verify("t", {"secret": "s"})
