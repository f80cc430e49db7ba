package gatestatus_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
)

// assertCut checks a text the status truncated: within limit bytes, valid UTF-8, the start of
// the original kept, and a marker that says how long the original was.
func assertCut(t *testing.T, got, original string, limit int) {
	t.Helper()
	assert.LessOrEqual(t, len(got), limit)
	assert.True(t, utf8.ValidString(got), "cut on a character boundary")
	marker := fmt.Sprintf(" … (truncated, %d bytes)", len(original))
	require.True(t, strings.HasSuffix(got, marker), "ends with %q: ...%q", marker, got[max(len(got)-60, 0):])
	assert.True(t, strings.HasPrefix(original, strings.TrimSuffix(got, marker)))
	assert.Greater(t, len(got), limit-len(marker)-utf8.UTFMax, "keeps as much as fits")
}

func TestNextTruncatesTextsToWhatTheAPIServerAccepts(t *testing.T) {
	sub := &v1alpha1.Subscription{Status: v1alpha1.SubscriptionStatus{InstalledCSV: "etcd.v1"}}
	for _, tc := range []struct {
		name string
		text string
	}{
		{"ASCII", strings.Repeat("x", 40000)},
		{"two-byte characters whose cut falls inside one", "x" + strings.Repeat("é", 20000)},
		{"three-byte characters", strings.Repeat("日", 15000)},
		{"four-byte characters", strings.Repeat("🙂", 10000)},
		{"many times over", strings.Repeat("migrating storage ", 1<<16)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &engine.Result{
				Conditions: []engine.Condition{{Type: "UpgradeBlocked", Status: "True", Reason: "OperatorNotUpgradeable", Message: tc.text}},
				Health:     []engine.Condition{{Type: "Degraded", Status: "True", Reason: "HealFailed", Message: tc.text}},
				Decision: engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{
					Code: "OperatorNotUpgradeable", Message: tc.text, Overridden: true, OverrideReason: tc.text, Source: tc.text}}}},
			}
			extra := []metav1.Condition{{Type: tollgatev1alpha1.ConditionAutomaticApproval, Status: "True", Reason: "AutomaticApproval", Message: tc.text}}
			o := gatestatus.Observation{Subscription: sub, Result: res, Digest: digest("d"), Extra: extra}
			status, problems := gatestatus.Next(tollgatev1alpha1.UpgradeGateStatus{}, o)
			assert.Empty(t, problems)
			require.Len(t, status.Conditions, 2)
			assertCut(t, status.Conditions[0].Message, tc.text, gatestatus.MaxConditionMessage)
			assertCut(t, status.Conditions[1].Message, tc.text, gatestatus.MaxConditionMessage)
			assertCut(t, status.Health[0].Message, tc.text, gatestatus.MaxConditionMessage)
			d := status.Decision.Denials[0]
			assertCut(t, d.Message, tc.text, gatestatus.MaxDenialText)
			assertCut(t, d.OverrideReason, tc.text, gatestatus.MaxDenialText)
			assertCut(t, d.Source, tc.text, gatestatus.MaxDenialText)

			again, _ := gatestatus.Next(status, o)
			assert.True(t, equality.Semantic.DeepEqual(status, again), "a truncated status is stable: no write on every reconcile")
		})
	}
}

func TestNextKeepsTextsThatFit(t *testing.T) {
	sub := &v1alpha1.Subscription{}
	exact := strings.Repeat("x", gatestatus.MaxConditionMessage)
	res := &engine.Result{
		Conditions: []engine.Condition{{Type: "UpgradeBlocked", Status: "True", Reason: "R", Message: exact}},
		Decision:   engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: "C", Message: exact[:gatestatus.MaxDenialText]}}}},
	}
	status, _ := gatestatus.Next(tollgatev1alpha1.UpgradeGateStatus{}, gatestatus.Observation{Subscription: sub, Result: res, Digest: digest("d")})
	assert.Equal(t, exact, status.Conditions[0].Message)
	assert.Equal(t, exact[:gatestatus.MaxDenialText], status.Decision.Denials[0].Message)

	res.Conditions[0].Message += "y"
	status, _ = gatestatus.Next(tollgatev1alpha1.UpgradeGateStatus{}, gatestatus.Observation{Subscription: sub, Result: res, Digest: digest("d")})
	assertCut(t, status.Conditions[0].Message, exact+"y", gatestatus.MaxConditionMessage)
}

func TestNextRefusesAnOverlongReason(t *testing.T) {
	long := strings.Repeat("A", gatestatus.MaxConditionReason+1)
	res := &engine.Result{Health: []engine.Condition{{Type: "Degraded", Status: "False", Reason: long, Message: "fine"}}}
	status, problems := gatestatus.Next(tollgatev1alpha1.UpgradeGateStatus{}, gatestatus.Observation{Subscription: &v1alpha1.Subscription{}, Result: res, Digest: digest("d")})
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "at most 1024 bytes")
	assert.Less(t, len(problems[0]), 1024, "the report quotes the reason shortened")
	assert.Equal(t, gatestatus.InvalidReason, status.Health[0].Reason)
	assert.LessOrEqual(t, len(status.Health[0].Message), gatestatus.MaxConditionMessage)
}
