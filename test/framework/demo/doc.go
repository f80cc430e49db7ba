// Package demo is the story `make demo` tells: on a local control plane (package
// controlplane), with the Tollgate manager running in the same process, an installed operator
// reports Upgradeable=False, a new version arrives and waits for approval, Tollgate holds it
// and explains why, the operator reports Upgradeable=True, and Tollgate approves the plan.
//
// The demo plays OLM's part: it creates and updates the OLM objects as OLM would. World builds
// that state without the story, for tests that need a held upgrade on a real API server.
//
// It is test code: test/demo runs it, and the shipped tollgate binary does not link it.
package demo
