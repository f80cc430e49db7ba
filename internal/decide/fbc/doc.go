// Package fbc reads a file-based catalog as catalogd serves it (GET {status.urls.base}/api/v1/all:
// one JSON object per line) and answers, for one package, what OLM v1 would install from it:
// the bundles a ClusterExtension's version range and channels select, the successors of the
// installed bundle (channel entries' replaces, skips and skipRange), ordered as OLM v1's
// resolver orders them (not deprecated first, then the highest version).
//
// The rules are operator-controller's (v1.2.0, internal/operator-controller/resolve and
// catalogmetadata/filter), with the same two semver libraries: Masterminds for the
// ClusterExtension's version range, blang for bundle versions and skipRange, as OLM v1 keeps
// both for registry+v1 bundles. One catalog at a time: ranking between catalogs (priority,
// ambiguity) is the caller's.
package fbc
