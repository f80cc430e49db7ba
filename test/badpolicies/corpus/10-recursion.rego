# Two rules that depend on each other.
# expect: is recursive
package tollgate.bad

a if b

b if a
