// Package upstream runs the tools that judge Tollgate's artefacts where they are used, each
// built from the version pinned in its hack/tools module: Prometheus' own rule and PromQL
// parsers on config/prometheus and config/grafana (hack/tools/prometheus), operator-framework
// api's bundle validators on bundles/olm (hack/tools/olm), and krew's validate-krew-manifest,
// which also installs the plugin with kubectl krew for every platform, on the manifest and
// archives hack/release writes (hack/tools/krew).
//
// The tools are built on first use into the Go build cache; a cold cache costs about a
// minute each on two cores.
package upstream
