package statusreport_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/report/statusreport"
)

func tableReport() *statusreport.Report {
	start := time.Date(2026, 11, 18, 10, 0, 0, 0, time.UTC)
	return &statusreport.Report{
		Now: "2026-11-20T12:30:00Z", Scope: "namespace team-a",
		Gates:  statusreport.GateCounts{Total: 2, Allowed: 1, Held: 1},
		ByCode: []statusreport.CodeCount{{Code: "OperatorNotUpgradeable", Gates: 1}},
		HeldLongest: []statusreport.HeldGate{{Namespace: "team-a", Name: "etcd", Since: start.Format(time.RFC3339), Start: start,
			Code: "OperatorNotUpgradeable", Message: "migrating\x1b[2J", PolicyRevision: "abc"}},
		InstallPlans: statusreport.PlanCounts{Pending: 1, AwaitingApproval: 1,
			Awaiting: []statusreport.PlanRef{{Namespace: "team-a", Name: "install-1", CSVs: []string{"etcd.v0.9.4"}}}},
		Policy: statusreport.PolicyInForce{Revision: "abc", Revisions: []statusreport.RevisionCount{{Revision: "abc", Gates: 2}}},
	}
}

func TestWriteTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, tableReport().WriteTable(&out, printers.TableOptions{}))
	assert.Equal(t, `Tollgate status of namespace team-a at 2026-11-20T12:30:00Z.

GATES  2: 1 allowed, 1 held, 0 without a decision yet

HELD BY CODE
  CODE                    GATES
  OperatorNotUpgradeable  1

HELD LONGEST (1 of 1)
  NAMESPACE  NAME  HELD SINCE            FOR   CODE                    MESSAGE
  team-a     etcd  2026-11-18T10:00:00Z  2d2h  OperatorNotUpgradeable  migrating\x1b[2J

INSTALL PLANS  1 pending, 1 awaiting approval
  NAMESPACE  NAME       CSVS
  team-a     install-1  etcd.v0.9.4

POLICY
  revision in force: abc (2 gate(s))
  no policy ConfigMap: the embedded policies (and bundles) only
`, out.String())
}

func TestWriteTableOfOneTable(t *testing.T) {
	tests := []struct {
		only string
		o    printers.TableOptions
		want string
	}{
		{"holds", printers.TableOptions{NoHeaders: true, Wide: true},
			"team-a  etcd  2026-11-18T10:00:00Z  2d2h  OperatorNotUpgradeable  migrating\\x1b[2J  abc\n"},
		{"plans", printers.TableOptions{},
			"INSTALL PLANS  1 pending, 1 awaiting approval\n  NAMESPACE  NAME       CSVS\n  team-a     install-1  etcd.v0.9.4\n"},
		{"codes", printers.TableOptions{NoHeaders: true}, "OperatorNotUpgradeable  1\n"},
		{"policy", printers.TableOptions{NoHeaders: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.only, func(t *testing.T) {
			var out bytes.Buffer
			tt.o.Only = tt.only
			require.NoError(t, tableReport().WriteTable(&out, tt.o))
			assert.Equal(t, tt.want, out.String())
		})
	}
	assert.Equal(t, []string{"codes", "holds", "plans", "extensions", "policy"}, statusreport.Tables)
}

func TestPrintableNamesTheLongestHeldGates(t *testing.T) {
	rep := tableReport()
	var names bytes.Buffer
	require.NoError(t, printers.WriteNames(&names, rep.Printable().Names()))
	assert.Equal(t, "upgradegate.tollgate.dev/etcd\n", names.String())
}
