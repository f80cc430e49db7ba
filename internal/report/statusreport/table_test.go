package statusreport_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
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
		{"bypasses", printers.TableOptions{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.only, func(t *testing.T) {
			var out bytes.Buffer
			tt.o.Only = tt.only
			require.NoError(t, tableReport().WriteTable(&out, tt.o))
			assert.Equal(t, tt.want, out.String())
		})
	}
	assert.Equal(t, []string{"bypasses", "codes", "holds", "plans", "extensions", "policy"}, statusreport.Tables)
}

func TestPrintableNamesTheLongestHeldGates(t *testing.T) {
	rep := tableReport()
	var names bytes.Buffer
	require.NoError(t, printers.WriteNames(&names, rep.Printable().Names()))
	assert.Equal(t, "upgradegate.tollgate.dev/etcd\n", names.String())
}

// A bypass comes first, one line each, after the gates: it is what an admin must read.
func TestWriteTableSaysEveryBypass(t *testing.T) {
	rep := tableReport()
	set := metav1.NewTime(time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC))
	b := tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindInstallPlan, Name: "install-x", UID: "u1", Field: tollgatev1alpha1.BypassFieldApproved, To: "true",
		By: "kubectl-patch\x1b[2J", At: &set, Decision: tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade"}}}
	rep.Bypasses = []statusreport.Bypass{{GateKind: "UpgradeGate", Namespace: "team-a", Gate: "etcd", Bypass: b,
		Line: "InstallPlan team-a/install-x approved by field manager kubectl-patch\x1b[2J at 2026-11-20T10:30:00Z, without Tollgate's approval (gate team-a/etcd held it: MajorVersionUpgrade)"}}
	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out, printers.TableOptions{}))
	assert.Contains(t, out.String(), `GATES  2: 1 allowed, 1 held, 0 without a decision yet

BYPASSED (1, newest first): changes only Tollgate is meant to make, made by someone else
  bypassed: InstallPlan team-a/install-x approved by field manager kubectl-patch\x1b[2J at 2026-11-20T10:30:00Z, without Tollgate's approval (gate team-a/etcd held it: MajorVersionUpgrade)

HELD BY CODE
`)
	out.Reset()
	require.NoError(t, rep.WriteTable(&out, printers.TableOptions{Only: "bypasses", NoHeaders: true}))
	assert.Equal(t, "bypassed: InstallPlan team-a/install-x approved by field manager kubectl-patch\\x1b[2J at 2026-11-20T10:30:00Z, without Tollgate's approval (gate team-a/etcd held it: MajorVersionUpgrade)\n", out.String())
}
