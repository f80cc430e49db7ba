// Package kubeconn is how a command line reaches a cluster as kubectl does: kubectl's cluster
// flags (cli-runtime's ConfigFlags: kubeconfig, context, server, token, impersonation, TLS,
// -n), every request bounded by a default request timeout, a live client that reads without a
// cache, and shell completion of namespaces and Subscription names read from the cluster.
// Errors say what they mean to the person running the command: a request that ran out of time,
// wherever it surfaced (the discovery of the server's APIs too), names the server, the timeout
// and --request-timeout; a server that answers as no Kubernetes API server does is named as
// such (ErrNotAPIServer), never taken for a missing object.
package kubeconn
