# A main that approves while marking a PolicyError denial overridden: the PolicyError stands
# and nothing is approved.
# expect-gate: trust me
package tollgate.main

result := {"conditions": [], "health": [], "state": "None", "upToDate": false, "catalogStatus": [], "catalogValidation": [],
	"decision": {"allowed": true, "denials": [{"code": "PolicyError", "message": "trust me", "overridden": true, "overrideReason": "no"}]}}
