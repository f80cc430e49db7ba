package gatestatus_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

func handApproved(uid string) tollgatev1alpha1.Bypass {
	return tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindInstallPlan, Name: "install-" + uid, UID: types.UID("uid-" + uid),
		Field: tollgatev1alpha1.BypassFieldApproved, To: "true", By: "kubectl-patch"}
}

func TestBypassesAreRecordedWithTheDecisionThenAndKept(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	sub := &v1alpha1.Subscription{Status: v1alpha1.SubscriptionStatus{InstalledCSV: "etcd.v1", CurrentCSV: "etcd.v2"}}
	held := &engine.Result{Revision: "rev1", Decision: engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: "MajorVersionUpgrade", Message: "2.0"}}}}}
	allowed := &engine.Result{Revision: "rev2", Decision: engine.Decision{Allowed: true}}
	observe := func(res *engine.Result, found ...tollgatev1alpha1.Bypass) gatestatus.Observation {
		return gatestatus.Observation{Generation: 1, Subscription: sub, Result: res, Digest: digest("d-" + res.Revision), Bypasses: found, Now: t0}
	}

	first := statusOf(tollgatev1alpha1.UpgradeGateStatus{}, observe(held, handApproved("a")))
	require.Len(t, first.Bypasses, 1)
	assert.Equal(t, tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade"}, PolicyRevision: "rev1", InputDigest: "d-rev1"}, first.Bypasses[0].Decision,
		"on a first decision, the decision this evaluation makes")

	// The plan approved by hand, the policies allow it now: the bypass is recorded with the
	// decision the gate held when it happened.
	next := statusOf(first, observe(allowed, handApproved("b")))
	require.Len(t, next.Bypasses, 2)
	assert.Equal(t, "uid-b", string(next.Bypasses[0].UID), "the newest first")
	assert.Equal(t, tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade"}, PolicyRevision: "rev1", InputDigest: "d-rev1"}, next.Bypasses[0].Decision)
	assert.True(t, next.Decision.Allowed)

	later := statusOf(next, observe(allowed))
	assert.Equal(t, next.Bypasses, later.Bypasses, "an evaluation that finds none keeps those recorded")
	again := statusOf(next, observe(allowed, handApproved("a")))
	assert.Equal(t, next.Bypasses, again.Bypasses, "one recorded already is not recorded again")
}

func TestExtensionBypassesAreRecordedWithWhatTheGateSaidOfTheVersion(t *testing.T) {
	old := tollgatev1alpha1.ExtensionGateStatus{Installed: "1.0.0", Pin: "1.0.0",
		Candidates: []tollgatev1alpha1.Candidate{{Version: "2.0.0", BlockedBy: "MajorVersionUpgrade"}},
		Decision:   tollgatev1alpha1.Decision{PolicyRevision: "rev1", InputDigest: "d1", BlockedBy: "MajorVersionUpgrade", Denials: []tollgatev1alpha1.Denial{{Code: "MajorVersionUpgrade"}}}}
	moved := tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindClusterExtension, Name: "demo", UID: "x1",
		Field: tollgatev1alpha1.BypassFieldVersion, From: "1.0.0", To: "2.0.0", By: "kubectl-edit"}
	res := &engine.Result{Revision: "rev1", Decision: engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: "ExtensionProgressing"}}}}}
	next, _ := gatestatus.NextExtension(old, gatestatus.ExtensionObservation{Outcome: pin.Outcome{Installed: "1.0.0", Head: pin.Judged{Result: res}},
		Pin: "1.0.0", Bypasses: []tollgatev1alpha1.Bypass{moved}})
	require.Len(t, next.Bypasses, 1)
	assert.Equal(t, tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade"}, PolicyRevision: "rev1", InputDigest: "d1"}, next.Bypasses[0].Decision,
		"what the status said of 2.0.0 before the move, not what the move itself makes the policies say")
	kept, _ := gatestatus.NextExtension(next, gatestatus.ExtensionObservation{Outcome: pin.Outcome{Installed: "1.0.0", Head: pin.Judged{Result: res}}, Pin: "1.0.0"})
	assert.Equal(t, next.Bypasses, kept.Bypasses)
}
