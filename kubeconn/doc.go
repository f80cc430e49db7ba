// Package kubeconn is how a command line reaches a cluster as kubectl does: kubectl's cluster
// flags (cli-runtime's ConfigFlags: kubeconfig, context, server, token, impersonation, TLS,
// -n), every request bounded by a default request timeout whose error names the server that
// did not answer, a live client that reads without a cache, and shell completion of
// namespaces and Subscription names read from the cluster.
package kubeconn
