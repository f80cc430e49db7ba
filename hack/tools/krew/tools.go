//go:build tools

// Package tools pins krew (installed as kubectl-krew) and validate-krew-manifest.
package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
