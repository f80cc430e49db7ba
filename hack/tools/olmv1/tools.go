//go:build tools

// Package tools pins the OLM v1 binaries the end-to-end tests run: catalogd and
// operator-controller, both from github.com/operator-framework/operator-controller v1.2.0. It is
// the newest release whose whole module graph the Go module proxy serves: v1.10.0 and v1.11.0
// import pkg.package-operator.run/boxcutter, which the proxy does not serve.
package tools

import (
	_ "github.com/operator-framework/operator-controller/cmd/catalogd"
	_ "github.com/operator-framework/operator-controller/cmd/operator-controller"
)
