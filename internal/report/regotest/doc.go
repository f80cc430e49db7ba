// Package regotest runs Rego unit tests (rules named test_*) with OPA's test runner on the
// policy set the manager would run: the embedded policies, then OPA bundles such as the policy
// packs, then the .rego files of the folders under test, a file whose path under its folder
// is that of an embedded one replacing it (as with --policy-dir).
//
// The non-test modules first compile as the manager compiles them (strict mode, the policy
// contract, its capabilities), each problem named by the file its author knows; the tests
// then run with the manager's capabilities, so a policy that calls a built-in the manager
// refuses fails here as it would in the cluster. The report is opa test's, and coverage is
// measured per policy file.
//
// `tollgate policy test` is Run with its flags.
package regotest
