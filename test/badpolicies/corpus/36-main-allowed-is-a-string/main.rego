# A main whose decision says allowed as a string.
# expect-gate: policy result has the wrong shape
package tollgate.main

result := {"decision": {"allowed": "true", "denials": []}}
