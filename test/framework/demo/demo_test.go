package demo_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/test/framework/demo"
)

// TestDemo is the demo run in CI: the whole story on a real control plane, in-process.
func TestDemo(t *testing.T) {
	start := time.Now()
	var stdout, stderr bytes.Buffer
	err := demo.Run(context.Background(), demo.Options{Out: &stdout, Err: &stderr})
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	for _, want := range []string{
		"== Step 1: Start a local control plane",
		"== Step 2: Start the Tollgate manager",
		"the operator reports in OperatorCondition etcd.v0.9.2: Upgradeable=False",
		"Tollgate created UpgradeGate demo/etcd",
		"== Step 5: Tollgate holds the upgrade",
		"held by OperatorNotUpgradeable",
		"InstallPlan install-etcd-v0-9-4: approved=false, it waits",
		"| Decision: HELD by OperatorNotUpgradeable",
		"| 1. OperatorNotUpgradeable",
		"kubectl edit operatorcondition -n demo etcd.v0.9.2",
		"== Step 7: Tollgate approves the InstallPlan",
		"approved=true",
		"after the operator reported Upgradeable=True",
		"state AtLatestKnown, allowed",
		"== Step 9: Clean up",
	} {
		assert.Contains(t, stdout.String(), want)
	}
	assert.Less(t, time.Since(start), time.Minute, "the demo finishes well under a minute")
}
