// Package input builds the policy input document (policies/README.md, version 1) for one
// Subscription from whatever client.Reader it is given: the manager's informer cache, a live
// client, or a snapshot of YAML files, so every caller evaluates exactly the same document.
//
// Building only reads. A missing object is null in the document and a missing list is [],
// never an error; the policies turn absence into conditions. Only a failed read (the API
// server or cache could not answer) is an error.
package input
