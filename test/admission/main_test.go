package admission

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

var (
	// upstream serves OLM's upstream CRDs: no structured sources, spec.sourceType required;
	// OLM v1's too, when built, for the gate lock.
	upstream *controlplane.Env
	// ours serves Tollgate's CRDs, whose CatalogSource has the structured sources.
	ours *controlplane.Env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	auditDir, err := os.MkdirTemp("", "tollgate-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(auditDir) }()
	opts, err := gateLockOptions(controlplane.Options{
		CRDDirs: []string{repo.Path("test", "testdata", "olm-upstream")},
	}, auditDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	upstream, err = controlplane.Start(opts)
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
	// ours gets the policies at once; upstream only in its test, after recording what the
	// CRD alone accepts.
	if err := applyPolicies(context.Background(), ours, true); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
