// Package policyset assembles the policy set a command evaluates with, as the manager would
// run it: the embedded policies, then OPA bundles, then the policy ConfigMaps read through any
// client.Reader (a live cluster or a snapshot), then a folder of local .rego files, which has
// the last word. Sources.Build also says, for explain, which ConfigMaps are in the set;
// Sources.Candidate is a proposed change (policy diff), with files of ConfigMaps replacing
// those in force. Every error names the file or ConfigMap key to fix.
package policyset
