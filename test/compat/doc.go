// Package compat proves that Tollgate's copies of the OLM types are wire-compatible with
// the upstream OLM CRDs, and that the generated CRDs validate what they promise.
package compat
