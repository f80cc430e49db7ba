# A lib.rego that replaces the embedded lib/lib.rego with one that lacks the functions the
# other embedded modules call: they no longer compile (errors located in embedded files,
# blamed on this ConfigMap).
# expect: undefined function data.tollgate.lib.
# file: any
package tollgate.lib

greeting := "hello"
