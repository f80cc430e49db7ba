# Reading the manager's environment.
# expect: opa.runtime is not allowed
package tollgate.bad

x := opa.runtime().env
