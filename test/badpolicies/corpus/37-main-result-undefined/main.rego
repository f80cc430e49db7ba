# A main whose result is only defined for an input that never comes: the entry point exists,
# so it compiles, but it has no value.
# expect-gate: has no value for this input
package tollgate.main

result := {"decision": {"allowed": true, "denials": []}} if input.never
