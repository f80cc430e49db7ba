// Package fbc reads a file-based catalog as catalogd serves it (GET {status.urls.base}/api/v1/all:
// one JSON object per line) and answers what OLM v1 would install from it: the bundles a
// ClusterExtension's version range and channels select, the successors of the installed bundle
// (channel entries' replaces, skips and skipRange, and any bundle of the installed version),
// ranked as OLM v1's resolver ranks them (not deprecated first, then the highest version), and,
// over several catalogs, every bundle OLM v1 could install for a query (Admit: catalog
// priority, and the ambiguity it refuses).
//
// The rules are operator-controller's (v1.2.0, internal/operator-controller/resolve,
// catalogmetadata/filter, compare and cache), with the same two semver libraries: Masterminds
// for the ClusterExtension's version range (build metadata ignored), blang for bundle versions
// and skipRange, as OLM v1 keeps both for registry+v1 bundles. Content is read as its cache
// reads it: an object it cannot load fails only its own package, and the last object of a
// name is the one kept.
package fbc
