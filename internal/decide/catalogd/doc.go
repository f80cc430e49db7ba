// Package catalogd reads OLM v1 catalogs' content from catalogd's HTTPS API
// (GET {status.urls.base}/api/v1/all), once per content digest however many ClusterExtensions
// use a catalog: a ClusterCatalog's status.resolvedSource.image.ref names its content by
// digest, so content read once for a digest never changes. A fetch is bounded in time and size
// and read whole or not at all (package fbc); a failed fetch is not kept, so the next asks
// again. Callers waiting on the same digest share one fetch.
package catalogd
