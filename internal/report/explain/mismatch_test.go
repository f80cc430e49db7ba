package explain

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

func TestEachConfigMapIsComparedWithTheVersionTheManagerServes(t *testing.T) {
	src := func(used bool, st *policysource.Status) PolicySource {
		return PolicySource{Namespace: "tollgate-system", Name: "site", Digest: "cccccccccccc", Used: used, Manager: st}
	}
	for _, tt := range []struct {
		name             string
		src              PolicySource
		manager, explain string // "" when there is no difference
		says             string
	}{
		{"the same current version", src(true, &policysource.Status{Status: "ok", Serving: "current", ServingDigest: "cccccccccccc"}), "", "", ""},
		{"an annotation from before the digest: current is trusted", src(true, &policysource.Status{Status: "ok", Serving: "current"}), "", "", ""},
		{"no annotation: the revisions tell", src(true, nil), "", "", ""},
		{"the manager lags behind a change", src(true, &policysource.Status{Status: "ok", Serving: "current", ServingDigest: "aaaaaaaaaaaa"}),
			"aaaaaaaaaaaa", "cccccccccccc", "has not loaded this change yet"},
		{"previous, of unknown digest", src(true, &policysource.Status{Status: "error", Serving: "previous"}),
			"previous", "cccccccccccc", "the manager serves its previous good version (digest previous), explain read the current one (digest cccccccccccc)"},
		{"previous, and explain left it out", src(false, &policysource.Status{Status: "error", Serving: "previous", ServingDigest: "aaaaaaaaaaaa",
			Errors: []engine.CompileErrorItem{{Message: "boom"}}}), "aaaaaaaaaaaa", "none", "explain left it out"},
		{"current for the manager, explain left every ConfigMap out", src(false, &policysource.Status{Status: "ok", Serving: "current", ServingDigest: "cccccccccccc"}),
			"cccccccccccc", "none", "the manager serves its current version (digest cccccccccccc), explain left it out"},
		{"none on both sides", src(false, &policysource.Status{Status: "error", Serving: "none"}), "", "", ""},
		{"none for the manager, explain used it", src(true, &policysource.Status{Status: "error", Serving: "none"}), "none", "cccccccccccc", "the manager leaves it out"},
		{"an unreadable annotation", PolicySource{Namespace: "ns", Name: "site", Used: true, Digest: "cccccccccccc", Unreadable: "not JSON"}, "unknown", "cccccccccccc", "not JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, differs := tt.src.difference()
			require.Equal(t, tt.manager != "", differs, d.Message)
			if differs {
				assert.Equal(t, tt.manager, d.Manager)
				assert.Equal(t, tt.explain, d.Explain)
				assert.Contains(t, d.Message, tt.says)
			}
		})
	}
}

func TestWithoutARecordedDecisionExplainLabelsItsOwn(t *testing.T) {
	prev := &policysource.Status{Status: "error", Serving: "previous", ServingDigest: "aaaaaaaaaaaa"}
	x := &Explainer{WithStored: true, Policy: &PolicyView{ConfigMaps: []PolicySource{{Namespace: "tollgate-system", Name: "site", Digest: "cccccccccccc", Used: true, Manager: prev}}}}
	gate := &tollgatev1alpha1.UpgradeGate{}
	m := x.mismatch(gate, &engine.Result{Revision: "rrrrrrrrrrrr"})
	require.NotNil(t, m)
	assert.Equal(t, DecisionOfExplain, m.Decision, "the gate records no decision to lead with")

	rep := &Report{Allowed: true, PolicyRevision: "rrrrrrrrrrrr", PolicyMismatch: m}
	var out bytes.Buffer
	require.NoError(t, rep.WriteText(&out))
	assert.Contains(t, out.String(), "Decision: ALLOWED: no denial stands (explain's evaluation, not necessarily the manager's: the policy sets differ)")
	assert.Contains(t, out.String(), "the gate records no decision of the manager's to show instead")

	now := metav1.Now()
	gate.Status.Decision = tollgatev1alpha1.Decision{PolicyRevision: "rrrrrrrrrrrr", EvaluatedAt: &now}
	assert.Nil(t, x.mismatch(gate, &engine.Result{Revision: "rrrrrrrrrrrr"}), "equal revisions: the same policy set")
	assert.Nil(t, (&Explainer{}).mismatch(gate, &engine.Result{Revision: "other"}), "no PolicyView: nothing to compare")
}
