// Package input builds the policy input document (policies/README.md, version 1) for one
// Subscription from whatever client.Reader it is given: the manager's informer cache, a live
// client, or a snapshot of YAML files, so every caller evaluates exactly the same document.
//
// Building only reads. A missing object is null in the document and a missing list is [],
// never an error; the policies turn absence into conditions. Only a failed read (the API
// server or cache could not answer) is an error.
//
// Operands are instances of the kinds the installed CSV owns, but a CSV is not trusted to say
// which kinds those are: a kind of a built-in group (BuiltinGroup) is never an operand, and
// Config.OperandKinds decides the rest (the manager: served by the CRD the CSV names, and
// readable by Tollgate; unreadable kinds are reported in the document, not failed on). At most
// MaxOperands+1 are listed: past MaxOperands the engine refuses the document (fail closed).
package input
