// Package gather builds the policy input document (policies/README.md, version 1) for one
// Subscription from whatever client.Reader it is given: the manager's informer cache, or a
// Snapshot of YAML files in the CLI, so both evaluate exactly the same document.
//
// Gathering only reads. A missing object is null in the document and a missing list is [],
// never an error; the policies turn absence into conditions. Only a failed read (the API
// server or cache could not answer) is an error.
package gather
