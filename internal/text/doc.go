// Package text makes text safe to show a person, for the decision path and the CLI alike:
// text from the cluster escaped for a terminal (Escape), commands quoted for a shell and parsed
// back only when plain (Command, ParseCommand), words wrapped (Wrap) and counted (Plural). It
// imports nothing beyond the standard library, so the manager can use it without the CLI's
// printers.
package text
