// Package policysource assembles the policy set Tollgate evaluates: the embedded policies,
// OPA bundles (directories, tarballs, bundle servers), the policy ConfigMaps of one namespace
// (read through any client.Reader) and local folders of Rego, into one candidate set of
// engine options, with where each module came from so a compile error names its source. The
// manager's policy reconciler and the CLI (eval, explain) assemble it the same way.
package policysource
