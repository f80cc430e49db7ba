package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// moveCases are plans whose moves are not the Subscription's pending upgrade: each must be
// held, by the rule the name gives, and the invariant (oracle_test.go) holds on each.
var moveCases = []planCase{
	{name: "a recreated Subscription's plan crosses a major version from the CSV it replaces", packs: []string{"version"},
		state: upgrade("etcd.v0.9.4", "etcd.v1.0.0", recreated, lookupReplaces("etcd.v0.9.4")), held: "MajorVersionUpgrade"},
	{name: "a new dependency crosses a major version from an ownerless CSV", packs: []string{"version"},
		state: bundled(withVersionedCSV("delta.v0.9.0", "0.9.0"), replacesInStep("delta.v0.9.0")), held: "MajorVersionUpgrade"},
	{name: "a dependency replaces another Subscription's CSV across a major version", packs: []string{"version"},
		state: bundled(withOwner(func(*testing.T, *snapshot.Snapshot) {}), replacesInStep("delta.v0.9.0")), held: "MajorVersionUpgrade"},
	{name: "a dependency replaces a CSV of a frozen package", packs: []string{"freeze"},
		data: map[string]any{"packs": map[string]any{"freeze": map[string]any{"periods": []any{map[string]any{
			"start": "2026-11-01T00:00:00Z", "end": "2026-12-01T00:00:00Z", "packages": []any{"delta-legacy"}}}}}},
		state: bundled(withOwner(func(*testing.T, *snapshot.Snapshot) {}), replacesInStep("delta.v0.9.0")), held: "ChangeFreeze"},
	{name: "the replacement chain reaches an operator that is not upgradeable",
		state: upgrade("etcd.v0.9.3", "etcd.v0.9.4", lookupReplaces("etcd.v0.9.3"), chainBehind("etcd.v0.9.3", "etcd.v0.9.2")), held: "OperatorNotUpgradeable"},
	{name: "a CSV step's spec.version and olm.package property disagree",
		state: upgrade("etcd.v1.0.0", "etcd.v1.9.9", lookupVersion("2.0.0"), csvStep("etcd.v1.9.9", "etcd.v1.9.9", "1.9.9")), held: "VersionConflict"},
	{name: "spec.version 2.0 is 2.0.0, as OLM parses it", packs: []string{"version"},
		state: upgrade("etcd.v1.0.0", "etcd.v1.9.9", csvStep("etcd.v1.9.9", "etcd.v1.9.9", "2.0")), held: "MajorVersionUpgrade"},
	{name: "a CSV step's manifest creates another CSV than it resolves",
		state: upgrade("etcd.v1.0.0", "etcd.v1.0.1", csvStep("etcd.v1.0.1", "etcd.v9.9.9", "1.0.1")), held: "its manifest creates CSV etcd.v9.9.9"},
	{name: "a CSV step for a CSV the plan does not list",
		state: upgrade("etcd.v1.0.0", "etcd.v1.0.1", csvStep("other.v1.0.0", "other.v1.0.0", "1.0.0")), held: "which spec.clusterServiceVersionNames does not list"},
	{name: "an unpacked bundle reference replaces a not-upgradeable operator",
		state: bundled(withOwner(ownerNotUpgradeable), unpackedReference("delta.v1.0.0", "delta.v0.9.0")), held: "OperatorNotUpgradeable"},
	{name: "a manifest's value of the wrong type is said in JSON's terms",
		state: upgrade("etcd.v1.0.0", "etcd.v1.0.1", numericVersionStep), held: "spec.version is a JSON number, where a string is expected"},
	{name: "an unpacked bundle reference without properties cannot be read",
		state: bundled(unpackedReference("delta.v1.0.0", "")), held: "carries no properties"},
}

// TestEveryMoveAPlanMakesIsJudged judges each moveCase's plan: held, with the reason it says.
func TestEveryMoveAPlanMakesIsJudged(t *testing.T) {
	for _, tc := range moveCases {
		t.Run(tc.name, func(t *testing.T) {
			snap := tc.state(t)
			d := &approval.Decider{Reader: snap, Policies: casePolicies(t, tc.packs, tc.data), Now: func() time.Time { return caseNow }}
			v := judgeWaiting(t, d, snap)
			assert.False(t, v.Approvable, "the plan must be held")
			assert.Contains(t, v.WhyNot(), tc.held)
			checkInvariant(t, snap, d, onlyPlan(t, snap), v)
		})
	}
}

// A plan is judged on its own version and peers: another pending plan of the same Subscription
// that installs 1.9.9 beside a held operator neither lends its version nor holds this plan.
func TestAPlanIsJudgedOnItsOwnVersionAndPeers(t *testing.T) {
	snap := upgrade("etcd.v1.0.0", "etcd.v1.9.9", lookupVersion("2.0.0"))(t)
	older := onlyPlan(t, snap).DeepCopy()
	older.Name, older.ResourceVersion = "install-older", ""
	older.Spec.ClusterServiceVersionNames = append(older.Spec.ClusterServiceVersionNames, "held.v1.0.0")
	older.Status.BundleLookups = []v1alpha1.BundleLookup{{Identifier: "etcd.v1.9.9", Path: "example.com/etcd-bundle",
		Properties: `{"properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"1.9.9"}}]}`}}
	add(t, snap, older)

	judge := func(packs []string, name string) approval.Verdict {
		d := &approval.Decider{Reader: snap, Policies: casePolicies(t, packs, nil), Now: func() time.Time { return caseNow }}
		p := &v1alpha1.InstallPlan{}
		require.NoError(t, snap.Get(context.Background(), types.NamespacedName{Namespace: bundledNS, Name: name}, p))
		v, err := d.Judge(context.Background(), p)
		require.NoError(t, err)
		checkInvariant(t, snap, d, p, v)
		return v
	}
	v := judge([]string{"version"}, "install-up")
	assert.False(t, v.Approvable, "install-up installs 2.0.0: a major version")
	assert.Contains(t, v.WhyNot(), "MajorVersionUpgrade")
	v = judge(nil, "install-up")
	assert.True(t, v.Approvable, "install-older's peer does not hold install-up: %s", v.WhyNot())
	v = judge(nil, "install-older")
	assert.False(t, v.Approvable)
	assert.Contains(t, v.WhyNot(), "held.v1.0.0")
}

// recreated clears the Subscription's installed CSV, as after it is deleted and created again.
func recreated(t *testing.T, snap *snapshot.Snapshot) {
	sub := &v1alpha1.Subscription{}
	require.NoError(t, snap.Get(context.Background(), types.NamespacedName{Namespace: bundledNS, Name: "etcd"}, sub))
	sub.Status.InstalledCSV = ""
	require.NoError(t, snap.Upsert(sub))
}

// lookupReplaces gives the upgrade's CSV a bundle lookup that replaces r.
func lookupReplaces(r string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			p.Status.BundleLookups = append(p.Status.BundleLookups, v1alpha1.BundleLookup{Identifier: p.Spec.ClusterServiceVersionNames[0], Replaces: r, Path: "example.com/etcd-bundle"})
		})
	}
}

func withVersionedCSV(name, version string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		add(t, snap, csvObject(bundledNS, name, version, v1alpha1.CSVPhaseSucceeded, nil))
	}
}

// chainBehind makes installed (the Subscription's, stuck Pending as OLM leaves it while the
// operator it replaces is not upgradeable) replace running, which runs (Replacing) and says
// Upgradeable=False.
func chainBehind(installed, running string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		csv := &v1alpha1.ClusterServiceVersion{}
		require.NoError(t, snap.Get(context.Background(), types.NamespacedName{Namespace: bundledNS, Name: installed}, csv))
		csv.Spec.Replaces, csv.Status.Phase, csv.Status.Reason = running, v1alpha1.CSVPhasePending, "OperatorConditionNotUpgradeable"
		require.NoError(t, snap.Upsert(csv))
		cond := metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Migrating", Message: "migrating storage", LastTransitionTime: metav1.NewTime(caseNow.Add(-time.Hour))}
		add(t, snap, csvObject(bundledNS, running, "", v1alpha1.CSVPhaseReplacing, nil), &operatorsv2.OperatorCondition{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v2", Kind: "OperatorCondition"},
			ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: running},
			Spec:       operatorsv2.OperatorConditionSpec{Conditions: []metav1.Condition{cond}},
			Status:     operatorsv2.OperatorConditionStatus{Conditions: []metav1.Condition{cond}},
		})
	}
}

// csvStep adds a CSV step resolving csv whose manifest creates name at version.
func csvStep(csv, name, version string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			manifest := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"` + name + `"},"spec":{"version":"` + version + `"}}`
			p.Status.Plan = append(p.Status.Plan, &v1alpha1.Step{Resolving: csv, Status: "Unknown", Resource: v1alpha1.StepResource{
				Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion", Name: csv, Manifest: manifest}})
		})
	}
}

// unpackedReference writes csv's CSV step as OLM does once it has unpacked the bundle: a
// reference to the ConfigMap holding it, with the bundle's replaces and (unless replaces is "")
// properties, and no bundle lookup left.
func unpackedReference(csv, replaces string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			props := `{\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"delta\",\"version\":\"1.0.0\"}}]}`
			if replaces == "" {
				props = ""
			}
			for _, s := range p.Status.Plan {
				if s.Resolving == csv && s.Resource.Kind == "ClusterServiceVersion" {
					s.Resource.Manifest = `{"kind":"ConfigMap","name":"bundle-abc","namespace":"olm","catalogSourceName":"real","catalogSourceNamespace":"olm","replaces":"` + replaces + `","properties":"` + props + `"}`
				}
			}
			p.Status.BundleLookups = nil
		})
	}
}

// numericVersionStep adds the upgrade's CSV step with spec.version a number.
func numericVersionStep(t *testing.T, snap *snapshot.Snapshot) {
	editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
		csv := p.Spec.ClusterServiceVersionNames[0]
		p.Status.Plan = append(p.Status.Plan, &v1alpha1.Step{Resolving: csv, Status: "Unknown", Resource: v1alpha1.StepResource{
			Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion", Name: csv,
			Manifest: `{"metadata":{"name":"` + csv + `"},"spec":{"version":101}}`}})
	})
}

// A Subscription whose own move is allowed but whose plan a move up the replacement chain holds
// is decided on that move: its gate says what holds the plan, never "allowed" beside it.
func TestTheGateSaysWhichMoveHoldsItsPlan(t *testing.T) {
	snap := upgrade("etcd.v0.9.3", "etcd.v0.9.4", lookupReplaces("etcd.v0.9.3"), chainBehind("etcd.v0.9.3", "etcd.v0.9.2"))(t)
	d := &approval.Decider{Reader: snap, Policies: casePolicies(t, nil, nil), Now: func() time.Time { return caseNow }}
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: bundledNS, Name: "etcd"})
	require.NoError(t, err)
	require.Len(t, dec.Plans, 1)
	assert.False(t, dec.Plans[0].Approvable)
	assert.False(t, dec.Result.Decision.Allowed, "the gate must not say allowed while its plan is held")
	assert.Contains(t, approval.Standing(dec.Result.Decision), "OperatorNotUpgradeable")
	move, _ := dec.Doc["move"].(map[string]any)
	from, _ := move["from"].(map[string]any)
	assert.Equal(t, "etcd.v0.9.2", from["name"], "the decision is the one on the move from the CSV that runs")
}
