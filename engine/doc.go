// Package engine compiles Tollgate's policy sources and evaluates input documents into typed
// results. It knows nothing of Kubernetes clients: the controller and the CLI gather an input
// document (package input) and hand it to Evaluate.
//
// A policy set is the embedded policies (package policies, minus *_test.rego), then OPA
// bundles, then admin modules (ConfigMaps); a later module with the same path replaces an
// earlier one. New compiles the whole set in strict mode (Rego v1) with restricted
// capabilities — no http.send, net.lookup_ip_addr or opa.runtime, and no non-deterministic
// built-in (rand.*, uuid.*, time.now_ns...: the clock is input.now) — checks the contract (a
// `deny` that tollgate.main would never collect, a missing entry point), and prepares the one
// query, data.tollgate.main.result, once. Any problem is a *CompileError listing file, row,
// column and message, so a bad ConfigMap is rejected whole and the caller keeps its previous
// Engine.
//
// Evaluate fails closed: a policy error, an undefined, malformed or oversized result, a missed
// deadline, an input listing more than MaxOperands operands, or a built-in error under an
// approval gives Allowed=false and a single PolicyError denial saying what went wrong. PolicyError and InstallPlanIncludesBlockedOperator always
// stand, whatever the policy says of their override. Denials are sorted (standing first, then
// code, then message), their texts cut at MaxText, capped at MaxDenials, and their Source names
// the rule whose METADATA custom.code matches:
// "upgrade/upgrade.rego:42 (deny: <title>)". Explain adds the rule per denial and the
// policies' print() and trace() notes.
//
// Revision identifies a policy set and Digest an input document (without its "now" and the
// gate's status, which Tollgate itself writes), so an unchanged decision on unchanged state is
// recognisable.
package engine
