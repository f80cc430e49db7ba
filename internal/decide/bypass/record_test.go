package bypass_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
)

var seen = metav1.NewTime(time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC))

func approvedPlan(uid string) tollgatev1alpha1.Bypass {
	return tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindInstallPlan, Name: "install-" + uid, UID: types.UID(uid),
		Field: tollgatev1alpha1.BypassFieldApproved, To: "true", By: "kubectl-patch", SeenAt: seen}
}

func movedPin(to string) tollgatev1alpha1.Bypass {
	return tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindClusterExtension, Name: "demo", UID: "x1",
		Field: tollgatev1alpha1.BypassFieldVersion, From: "1.0.0", To: to, By: "kubectl-edit", SeenAt: seen}
}

func names(list []tollgatev1alpha1.Bypass) []string {
	out := []string{}
	for _, b := range list {
		out = append(out, fmt.Sprintf("%s=%s", b.UID, b.To))
	}
	return out
}

func TestAddRecordsEachBypassOnceNewestFirstAndKeepsTheLastFew(t *testing.T) {
	list := bypass.Add(nil, approvedPlan("a"))
	assert.Equal(t, []string{"a=true"}, names(list))
	assert.Equal(t, list, bypass.Add(list, approvedPlan("a")), "the same plan again: recorded already")
	list = bypass.Add(list, approvedPlan("b"), approvedPlan("b"), movedPin("1.2.0"))
	assert.Equal(t, []string{"b=true", "x1=1.2.0", "a=true"}, names(list), "found together, in the order found, ahead of the older")
	assert.Equal(t, list, bypass.Add(list, movedPin("1.2.0")), "the same version set on the same extension: recorded already")
	list = bypass.Add(list, movedPin("1.3.0"), approvedPlan("c"), approvedPlan("d"))
	assert.Equal(t, []string{"x1=1.3.0", "c=true", "d=true", "b=true", "x1=1.2.0"}, names(list), "the most recent MaxBypasses")
	assert.Nil(t, bypass.Add(nil), "nothing to record: still nothing")
}

func TestAddedAreTheBypassesToReport(t *testing.T) {
	old := []tollgatev1alpha1.Bypass{approvedPlan("a"), approvedPlan("b")}
	next := bypass.Add(old, approvedPlan("c"))
	assert.Equal(t, []string{"c=true"}, names(bypass.Added(old, next)))
	assert.Empty(t, bypass.Added(next, next))
	assert.Empty(t, bypass.Added(old, old[:1]), "one dropped off the end: nothing to report")
}

func TestDecisionOfSaysWhatTheGateSaid(t *testing.T) {
	held := tollgatev1alpha1.Decision{BlockedBy: "MajorVersionUpgrade", PolicyRevision: "r1", InputDigest: "d1", Denials: []tollgatev1alpha1.Denial{
		{Code: "ChangeFreeze", Overridden: true}, {Code: "MajorVersionUpgrade"}, {Code: "OperatorDegraded"}, {Code: "MajorVersionUpgrade"},
	}}
	assert.Equal(t, tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade", "OperatorDegraded"}, PolicyRevision: "r1", InputDigest: "d1"},
		bypass.DecisionOf(held), "the standing codes, once each")
	assert.Equal(t, tollgatev1alpha1.BypassDecision{Allowed: true, PolicyRevision: "r1"}, bypass.DecisionOf(tollgatev1alpha1.Decision{Allowed: true, PolicyRevision: "r1"}))
	assert.Equal(t, []string{"X"}, bypass.DecisionOf(tollgatev1alpha1.Decision{BlockedBy: "X"}).Codes, "denials capped away: the code that holds")
}

func TestPinDecisionIsWhatTheGateSaidOfTheVersionSet(t *testing.T) {
	status := tollgatev1alpha1.ExtensionGateStatus{
		Installed: "1.0.0",
		Candidates: []tollgatev1alpha1.Candidate{
			{Version: "2.0.0", Bundle: "demo.v2.0.0", BlockedBy: "MajorVersionUpgrade"},
			{Version: "1.2.0", Bundle: "demo.v1.2.0", BlockedBy: "SoakTimeNotElapsed"},
			{Version: "1.1.0", Bundle: "demo.v1.1.0", Allowed: true},
		},
		Decision: tollgatev1alpha1.Decision{PolicyRevision: "r1", InputDigest: "d1", BlockedBy: "MajorVersionUpgrade",
			Denials: []tollgatev1alpha1.Denial{{Code: "MajorVersionUpgrade"}, {Code: "OutsideMaintenanceWindow"}}},
	}
	tests := []struct {
		version string
		want    tollgatev1alpha1.BypassDecision
	}{
		{"2.0.0", tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade", "OutsideMaintenanceWindow"}, PolicyRevision: "r1", InputDigest: "d1"}},
		{"1.2.0+rebuild", tollgatev1alpha1.BypassDecision{Codes: []string{"SoakTimeNotElapsed"}, PolicyRevision: "r1"}},
		{"1.1.0", tollgatev1alpha1.BypassDecision{Allowed: true, PolicyRevision: "r1"}},
		{"1.0.0", tollgatev1alpha1.BypassDecision{Allowed: true, PolicyRevision: "r1"}},
		{"0.9.0", tollgatev1alpha1.BypassDecision{PolicyRevision: "r1"}},
		{">=1.0.0", tollgatev1alpha1.BypassDecision{PolicyRevision: "r1"}},
		{"", tollgatev1alpha1.BypassDecision{PolicyRevision: "r1"}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			assert.Equal(t, tt.want, bypass.PinDecision(status, tt.version))
		})
	}
}

func TestSummarySaysWhatWhoWhenAndWhatTheGateSaid(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC))
	plan := approvedPlan("a")
	plan.At, plan.Decision = &at, tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade"}, PolicyRevision: "0123456789ab"}
	assert.Equal(t, "InstallPlan team-a/install-a approved by field manager kubectl-patch at 2026-11-20T10:30:00Z, without Tollgate's approval (gate team-a/etcd held it: MajorVersionUpgrade; policy revision 0123456789ab)",
		bypass.Summary(plan, "team-a", "team-a/etcd"))

	plan.By, plan.At, plan.Decision = tollgatev1alpha1.UnknownFieldManager, nil, tollgatev1alpha1.BypassDecision{Allowed: true}
	assert.Equal(t, "InstallPlan team-a/install-a approved by an unknown field manager, seen at 2026-11-20T11:00:00Z, without Tollgate's approval (gate team-a/etcd allowed it)",
		bypass.Summary(plan, "team-a", "team-a/etcd"))

	pin := movedPin("")
	assert.Equal(t, `ClusterExtension demo pin moved from 1.0.0 to "" by field manager kubectl-edit, seen at 2026-11-20T11:00:00Z, without Tollgate's approval (gate demo did not allow it)`,
		bypass.Summary(pin, "", "demo"), "an empty pin (every version) and a manager without a time")
}
