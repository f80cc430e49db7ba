# A function defined with one argument and again with two.
# expect: conflicting rules
package tollgate.bad

f(a) := a

f(a, b) := b
