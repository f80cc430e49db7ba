package compat

import (
	"fmt"
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

var (
	// upstream serves the upstream OLM CRDs only.
	upstream *controlplane.Env
	// ours serves the CRDs Tollgate generates (UpgradeGate and the OLM kinds).
	ours *controlplane.Env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	upstream, err = controlplane.Start(controlplane.Options{
		CRDDirs: []string{repo.Path("test", "testdata", "olm-upstream")},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = upstream.Stop() }()
	ours, err = controlplane.Start(controlplane.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = ours.Stop() }()
	return m.Run()
}
