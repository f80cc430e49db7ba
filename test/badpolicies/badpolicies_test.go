package badpolicies

import (
	"encoding/json"
	"io/fs"
	"maps"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	embedded "github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// The policy ConfigMaps every case edits, and what they hold when good.
const (
	siteName = "site"
	teamName = "team"
	dataName = "site-data"
	siteHold = "SiteHold"
	teamHold = "TeamHold"
	owner    = "platform-team"
	goodData = "site:\n  owner: " + owner + "\n"
)

// holdModule holds every Subscription of ns with code: the site's names the owner set in
// the data ConfigMap, so that its denial shows the good versions of both in force.
func holdModule(pkg, code, ns string) string {
	return `package tollgate.` + pkg + `

# METADATA
# title: the ` + pkg + ` holds every upgrade in the test's namespace
# custom:
#   code: ` + code + `
deny contains {"code": "` + code + `", "message": sprintf("held by the ` + pkg + ` policy of %s", [object.get(data.tollgate.config, ["site", "owner"], "nobody")])} if {
	input.subscription.metadata.namespace == "` + ns + `"
}
`
}

// TestEveryBadPolicyIsReportedAndDecisionsContinue applies each case of the corpus, in
// order, as an edit of the policy ConfigMaps in service, with one Manual Subscription whose
// upgrade plan is pending. After each case it checks where the error is reported and what is
// in force, and that the manager still decides: the operator reports Upgradeable=False with
// a message naming the case, and the gate must follow under the good policy. That costs one
// status write and one gate poll a case (well under a second); doing it after every case,
// not once at the end, shows that no single case stopped the controller or left the wrong
// policy in force. The plan is checked unapproved after every case (an approval is never
// undone, so a wrong one cannot hide), and at the end the holds are lifted and the plan is
// approved: decisions continued to the last.
//
// The Rego cases alternate between two Rego ConfigMaps, site and team: client-go's event
// recorder drops a Warning Event on one object beyond 25 in five minutes, and the corpus
// rejects more Rego than that.
func TestEveryBadPolicyIsReportedAndDecisionsContinue(t *testing.T) {
	cases, err := loadCorpus("corpus")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 25)

	k := olmplay.NewCluster(t, env.Client, "bad-")
	w := &world{k: k, etcd: k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual), good: map[string]map[string]string{
		siteName: {"site.rego": holdModule("site", siteHold, k.NS)},
		teamName: {"team.rego": holdModule("team", teamHold, k.NS)},
		dataName: {"site.yaml": goodData},
	}}
	w.site = w.policyMap(siteName, policysource.KindRego, w.good[siteName])
	w.team = w.policyMap(teamName, policysource.KindRego, w.good[teamName])
	w.data = w.policyMap(dataName, policysource.KindData, w.good[dataName])
	for _, s := range w.sources() {
		w.status(t, s.cm, "ok")
	}
	w.plan = w.etcd.OfferUpgrade("0.9.4")
	w.goodRevision = w.decides(t, "before the corpus")

	for i, c := range cases {
		rego := w.site
		if i%2 == 1 {
			rego = w.team
		}
		t.Run(c.name, func(t *testing.T) { w.try(t, c, rego) })
	}

	w.k.StillUnapproved(w.plan)
	w.etcd.Report("Upgradeable", metav1.ConditionTrue, "the corpus is done")
	for _, s := range w.sources() {
		require.NoError(t, k.Client.Delete(k.Ctx, s.cm))
	}
	k.Approved(w.plan)
}

// world is the test's namespace, its Subscription and plan, and the policy ConfigMaps.
type world struct {
	k                *olmplay.Cluster
	etcd             *olmplay.Operator
	plan             *v1alpha1.InstallPlan
	site, team, data *corev1.ConfigMap
	good             map[string]map[string]string // each ConfigMap's good data, by name
	goodRevision     string                       // the policy revision of the good set
}

// source is a policy ConfigMap and its good data.
type source struct {
	cm   *corev1.ConfigMap
	good map[string]string
}

func (w *world) sources() []source {
	return []source{{w.site, w.good[siteName]}, {w.team, w.good[teamName]}, {w.data, w.good[dataName]}}
}

// try applies case c, its Rego keys to the Rego ConfigMap rego, checks what it must come
// to, and puts the good policy back.
func (w *world) try(t *testing.T, c badCase, rego *corev1.ConfigMap) {
	edits := map[string]map[string]string{rego.Name: c.rego, dataName: c.data}
	events := w.events(t)
	w.apply(t, edits)
	switch c.outcome {
	case rejected:
		cm := rego
		if len(c.data) > 0 {
			cm = w.data
		}
		w.checkRejected(t, c, cm, events)
		for _, s := range w.sources() {
			if s.cm != cm {
				assert.Equal(t, policysource.ServingCurrent, w.status(t, s.cm, "ok").Serving, "the other ConfigMaps stay in service")
			}
		}
		// The last good version stays in force and decisions continue.
		assert.Equal(t, w.goodRevision, w.decides(t, c.name), "the last good policy set decides")
		w.apply(t, nil)
		w.status(t, cm, "ok")
		assert.Zero(t, metric(t, "tollgate_policy_source_failing", map[string]string{"source": "configmap/" + policyNS + "/" + cm.Name}))
	case failsClosed, holds:
		revision := w.inService(t, false)
		for _, s := range w.sources() {
			st := w.status(t, s.cm, "ok")
			assert.Equal(t, policysource.ServingCurrent, st.Serving, "it compiles, so it is in service")
		}
		gate := w.gate(t, "decided by the case's policy", func(g *tollgatev1alpha1.UpgradeGate) bool {
			return g.Status.Decision.PolicyRevision == revision
		})
		if c.outcome == failsClosed {
			w.checkFailsClosed(t, c, gate)
		} else {
			assert.False(t, gate.Status.Decision.Allowed)
			assert.True(t, olmplay.HasDenial(gate, c.expect, false), "%s still denies: %+v", c.expect, gate.Status.Decision.Denials)
			assert.False(t, olmplay.HasDenial(gate, tollgatev1alpha1.CodePolicyError, false), "%+v", gate.Status.Decision.Denials)
		}
		w.apply(t, nil)
		assert.Equal(t, w.goodRevision, w.inService(t, true), "the good set is back in service")
		w.decides(t, c.name)
	}
	assert.False(t, w.k.PlanApproved(w.plan), "no bad policy approves the plan")
}

// checkRejected checks that cm's status annotation, a new Event (not among before), the
// metric and the log report c's error, and that the annotation names c's file.
func (w *world) checkRejected(t *testing.T, c badCase, cm *corev1.ConfigMap, before map[types.UID]int32) {
	st := w.status(t, cm, "error")
	assert.Equal(t, policysource.ServingPrevious, st.Serving, "the ConfigMap's last good version stays in service")
	require.NotEmpty(t, st.Errors)
	var lines []string
	named := false
	for _, it := range st.Errors {
		lines = append(lines, it.String())
		named = named || c.files(cm)[it.File]
	}
	all := strings.Join(lines, "\n")
	assert.Contains(t, all, c.expect)
	if !c.anyFile {
		assert.True(t, named, "an error names the case's file (one of %v): %s", c.keys(), all)
	}
	assert.Equal(t, w.goodRevision, policies.Engine().Revision(), "a rejected source does not replace the policy set")
	w.event(t, cm, controllers.EventPolicyRejected, c.expect, before)
	assert.Equal(t, 1.0, metric(t, "tollgate_policy_source_failing", map[string]string{"source": "configmap/" + policyNS + "/" + cm.Name}))
	assert.True(t, errorLog.logged("policy configmap rejected", "configmap", cm.Name, c.expect), "the log says why %s was rejected", cm.Name)
}

// checkFailsClosed checks that gate's decision is a standing PolicyError saying c.expect.
func (w *world) checkFailsClosed(t *testing.T, c badCase, gate *tollgatev1alpha1.UpgradeGate) {
	d := gate.Status.Decision
	assert.False(t, d.Allowed, "a policy that cannot decide approves nothing")
	found := false
	for _, den := range d.Denials {
		found = found || den.Code == tollgatev1alpha1.CodePolicyError && !den.Overridden && strings.Contains(den.Message, c.expect)
	}
	assert.True(t, found, "a standing PolicyError saying %q; the denials: %+v", c.expect, d.Denials)
}

// apply sets each policy ConfigMap to its good data plus the keys edits gives it (by
// ConfigMap name), writing only those that change.
func (w *world) apply(t *testing.T, edits map[string]map[string]string) {
	t.Helper()
	for _, s := range w.sources() {
		want := maps.Clone(s.good)
		maps.Copy(want, edits[s.cm.Name])
		require.NoError(t, w.k.Client.Get(w.k.Ctx, client.ObjectKeyFromObject(s.cm), s.cm))
		if maps.Equal(want, s.cm.Data) {
			continue
		}
		s.cm.Data = want
		require.NoError(t, w.k.Client.Update(w.k.Ctx, s.cm))
	}
}

// inService waits until the policy set in service is the good one (back) or another one, and
// returns its revision.
func (w *world) inService(t *testing.T, back bool) string {
	t.Helper()
	var revision string
	require.Eventually(t, func() bool {
		revision = policies.Engine().Revision()
		return (revision == w.goodRevision) == back
	}, olmplay.Wait, olmplay.Tick, "the policy set in service never changed (back to good: %v)", back)
	return revision
}

// decides plays the operator saying it is not upgradeable, with a message naming what,
// and waits until the gate follows under the good policy set: the site's and the team's
// holds, naming the owner from the good data, and OperatorNotUpgradeable with that message. It returns the
// decision's policy revision.
func (w *world) decides(t *testing.T, what string) string {
	t.Helper()
	said := "not upgradeable during " + what
	w.op(t).Report("Upgradeable", metav1.ConditionFalse, said)
	gate := w.gate(t, "held by the good policy for "+what, func(g *tollgatev1alpha1.UpgradeGate) bool {
		return has(g, tollgatev1alpha1.CodeOperatorNotUpgradeable, said) &&
			has(g, siteHold, "held by the site policy of "+owner) && has(g, teamHold, "held by the team policy of "+owner)
	})
	assert.False(t, gate.Status.Decision.Allowed)
	assert.False(t, olmplay.HasDenial(gate, tollgatev1alpha1.CodePolicyError, false), "%+v", gate.Status.Decision.Denials)
	return gate.Status.Decision.PolicyRevision
}

// has says whether the gate has a standing denial with code whose message says text.
func has(g *tollgatev1alpha1.UpgradeGate, code, text string) bool {
	for _, d := range g.Status.Decision.Denials {
		if d.Code == code && !d.Overridden && strings.Contains(d.Message, text) {
			return true
		}
	}
	return false
}

// gate waits for etcd's gate to satisfy ok, failing t (not the whole test) if it does not.
func (w *world) gate(t *testing.T, what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) *tollgatev1alpha1.UpgradeGate {
	t.Helper()
	return w.op(t).Gate(what, ok)
}

// op is etcd as seen by t, so that its helpers fail t.
func (w *world) op(t *testing.T) *olmplay.Operator {
	k := *w.k
	k.T = t
	op := *w.etcd
	op.K = &k
	return &op
}

// policyMap creates a policy ConfigMap in the policy namespace and removes it when the test
// ends.
func (w *world) policyMap(name, kind string, data map[string]string) *corev1.ConfigMap {
	w.k.T.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: name, Labels: map[string]string{policysource.Label: kind}}, Data: data}
	w.k.Create(cm)
	w.k.T.Cleanup(func() { _ = w.k.Client.Delete(w.k.Ctx, cm) })
	return cm
}

// status waits for cm's status annotation to be status and returns it.
func (w *world) status(t *testing.T, cm *corev1.ConfigMap, status string) policysource.Status {
	t.Helper()
	var got policysource.Status
	require.Eventually(t, func() bool {
		if w.k.Client.Get(w.k.Ctx, client.ObjectKeyFromObject(cm), cm) != nil {
			return false
		}
		got = policysource.Status{}
		return json.Unmarshal([]byte(cm.Annotations[policysource.StatusAnnotation]), &got) == nil && got.Status == status
	}, olmplay.Wait, olmplay.Tick, "configmap %s never reported %s; annotation: %q", cm.Name, status, cm.Annotations[policysource.StatusAnnotation])
	return got
}

// events are the Events in the policy namespace: how many times each was seen, by UID.
func (w *world) events(t *testing.T) map[types.UID]int32 {
	t.Helper()
	list := &corev1.EventList{}
	require.NoError(t, w.k.Client.List(w.k.Ctx, list, client.InNamespace(policyNS)))
	out := map[types.UID]int32{}
	for _, e := range list.Items {
		out[e.UID] = e.Count
	}
	return out
}

// event waits for a Warning Event reason on obj whose message says text, and that is new
// or seen again since before.
func (w *world) event(t *testing.T, obj client.Object, reason, text string, before map[types.UID]int32) {
	t.Helper()
	require.Eventually(t, func() bool {
		list := &corev1.EventList{}
		if err := w.k.Client.List(w.k.Ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return false
		}
		for _, e := range list.Items {
			seen, old := before[e.UID]
			if (!old || e.Count > seen) && e.InvolvedObject.Name == obj.GetName() && e.Type == corev1.EventTypeWarning &&
				e.Reason == reason && strings.Contains(e.Message, text) {
				return true
			}
		}
		return false
	}, olmplay.Wait, olmplay.Tick, "no new Warning event %s on %s saying %q", reason, obj.GetName(), text)
}

// files are the paths an error in c applied to cm may name: a key named like an embedded
// file replaces it, another Rego key is configmap/<name>/<key>, and a data key is named as
// it is.
func (c badCase) files(cm *corev1.ConfigMap) map[string]bool {
	out := map[string]bool{}
	if cm.Labels[policysource.Label] == policysource.KindData {
		for k := range c.data {
			out[k] = true
		}
		return out
	}
	replaced := embeddedPaths()
	for k := range c.rego {
		if p, ok := replaced[k]; ok {
			out[p] = true
		} else {
			out["configmap/"+cm.Name+"/"+k] = true
		}
	}
	return out
}

// embeddedPaths maps the base name of each embedded policy file to its path.
func embeddedPaths() map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(embedded.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".rego") && !strings.HasSuffix(p, "_test.rego") {
			out[path.Base(p)] = p
		}
		return nil
	})
	return out
}

// metric is the sum of the samples of the metric name whose labels include want.
func metric(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue samples
				}
			}
			total += m.GetGauge().GetValue()
		}
	}
	return total
}
