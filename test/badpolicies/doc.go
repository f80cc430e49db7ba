// Package badpolicies runs the bad-policy corpus (corpus/, one file or folder per case)
// through the Tollgate manager on a real kube-apiserver. Each case is applied as an edit of
// the policy ConfigMaps in service: a Rego ConfigMap whose site rule holds every upgrade of
// the test's namespace (SiteHold), and a data ConfigMap the rule reads. Whatever the case,
// the manager does not crash and keeps deciding, and:
//
//   - a case that does not load (`# expect: ...`) is reported where README.md says (the
//     ConfigMap's tollgate.dev/policy-status annotation, naming the file, with serving
//     "previous"; a Warning Event; the tollgate_policy_source_failing metric; the log), and
//     the ConfigMap's last good version stays in force;
//   - a case that loads but cannot decide (`# expect-gate: ...`) fails closed: every
//     decision is a standing PolicyError denial saying why, and nothing is approved;
//   - a case that loads and should change nothing (`# expect-hold: CODE`) leaves CODE denying.
//
// Each case's first comment says what it is and what it expects.
package badpolicies
