// Package replay evaluates the decisions of a decision log again, with a policy set that may
// differ from the one they were logged with, and compares the outcomes: the same (both allow,
// or both hold with the same standing denial codes), different, not replayable (an event
// logged without input or without result.decision, or not a Tollgate decision), or input
// edited (an input that is not the one its input_digest and input_sha256 were taken of, its
// clock included, so its logged decision says nothing about it).
//
// `tollgate eval --replay` prints a Report; its JSON form is that command's -o json, which
// cmd/tollgate/README.md documents.
package replay
