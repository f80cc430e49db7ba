package approval_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// planCase is a state with one plan waiting, built from what real OLM wrote for a bundled
// first install (gamma requires delta: one plan installs both and creates delta's
// Subscription), and how the plan must be judged. The cases are what an attacker or a careless
// tenant would try; the oracle (oracle_test.go) runs over them too.
type planCase struct {
	name string
	// packs are the policy packs loaded beside the embedded policies, with data as
	// data.tollgate.config.
	packs []string
	data  map[string]any
	// state builds the snapshot.
	state func(t *testing.T) *snapshot.Snapshot
	// held: the plan must not be approvable, and its verdict must say why.
	held string
}

// bundledNS is the namespace of the bundled first install real OLM wrote.
const bundledNS = "bundled-5npqb"

var caseNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

var planCases = []planCase{
	{name: "a new dependency, as real OLM bundles it", state: bundled()},
	{name: "an unrelated CSV in phase Deleting holds nothing", state: bundled(withCSV("stale.v1", v1alpha1.CSVPhaseDeleting, nil))},
	{name: "soak published reads the PackageManifest's createdAt", packs: []string{"soak"},
		data:  map[string]any{"packs": map[string]any{"soak": map[string]any{"hours": 1, "basis": "published"}}},
		state: bundled(withPackage("gamma", "gamma.v1.0.0", "1.0.0", "2026-11-01T00:00:00Z"), withPackage("delta", "delta.v1.0.0", "1.0.0", "2026-11-01T00:00:00Z"))},

	{name: "1: the dependency's CSV step replaces a not-upgradeable operator of another package",
		state: bundled(withOwner(ownerNotUpgradeable), replacesInStep("delta.v0.9.0")), held: "OperatorNotUpgradeable"},
	{name: "1: the dependency's bundle lookup replaces a not-upgradeable operator",
		state: bundled(withOwner(ownerNotUpgradeable), replacesInLookup("delta.v0.9.0")), held: "OperatorNotUpgradeable"},
	{name: "1: the dependency replaces an operator whose gate is in Audit mode",
		state: bundled(withOwner(ownerInAudit), replacesInStep("delta.v0.9.0")), held: "legacy, which owns delta.v0.9.0 that it replaces: is in Audit mode"},
	{name: "1: the dependency replaces a copied CSV no Subscription follows",
		state: bundled(withCSV("delta.v0.9.0", v1alpha1.CSVPhaseSucceeded, map[string]string{v1alpha1.CopiedFromLabel: "operators"}), replacesInStep("delta.v0.9.0")),
		held:  "replaces delta.v0.9.0, which no Subscription owns"},
	{name: "1: the plan names two CSVs the dependency replaces",
		state: bundled(withCSV("delta.v0.9.0", v1alpha1.CSVPhaseSucceeded, nil), replacesInStep("delta.v0.9.0"), replacesInLookup("delta.v0.8.0")),
		held:  "the plan says it replaces several CSVs"},

	{name: "2: firstinstall holds the dependency's first install", packs: []string{"firstinstall"},
		data:  map[string]any{"packs": map[string]any{"firstinstall": map[string]any{"allow": []any{map[string]any{"package": "gamma"}}}}},
		state: bundled(), held: "FirstInstallNotApproved"},
	{name: "2: freeze holds the dependency's package", packs: []string{"freeze"},
		data: map[string]any{"packs": map[string]any{"freeze": map[string]any{"periods": []any{map[string]any{
			"start": "2026-11-01T00:00:00Z", "end": "2026-12-01T00:00:00Z", "packages": []any{"delta"}}}}}},
		state: bundled(), held: "ChangeFreeze"},
	{name: "2: version denies the dependency's version", packs: []string{"version"},
		data:  map[string]any{"packs": map[string]any{"version": map[string]any{"packages": map[string]any{"delta": map[string]any{"denied": []any{"1.0.0"}}}}}},
		state: bundled(), held: "VersionNotAllowed"},
	{name: "2: the dependency comes from a catalog in TRANSIENT_FAILURE",
		state: bundled(withCatalog("broken", "TRANSIENT_FAILURE"), dependencySource("broken")), held: "delta-stable-real-olm, the Subscription the plan creates for it"},

	{name: "3: two Subscription steps for the dependency's CSV",
		state: bundled(extraSubscriptionStep("nobody")), held: "the plan has 2 Subscription steps for it"},
	{name: "3: a step for a package nobody follows before the one for a followed package",
		state: bundled(extraSubscriptionStep("nobody"), withFollower("delta", "delta.v0.5.0")), held: "the plan has 2 Subscription steps for it"},
	{name: "3: the dependency's package is followed by a Subscription that wants another CSV",
		state: bundled(withFollower("delta", "delta.v0.5.0")), held: "which Subscription delta already follows"},

	{name: "4: a bundle version wins over the name", packs: []string{"version"},
		state: upgrade("etcd.v1.0.0", "etcd.v1.9.9", lookupVersion("2.0.0")), held: "MajorVersionUpgrade"},
	{name: "4: build metadata is the version semver says", packs: []string{"version"},
		data:  map[string]any{"packs": map[string]any{"version": map[string]any{"denied": []any{"1.2.3"}}}},
		state: upgrade("etcd.v1.2.0", "etcd.v1.2.3-hotfix.1", packageVersion("1.2.3+hotfix.1")), held: "VersionNotAllowed"},

	{name: "5: a plan that lists only a dependency", state: bundled(onlyDependency), held: "no Subscription of the plan's namespace waits on it"},
	{name: "a CSV step whose manifest does not parse", state: bundled(brokenStep), held: "cannot be read"},
}

// TestEveryCSVAPlanCreatesOrReplacesIsDecided judges each case's plan: held where it says,
// approvable otherwise, and the invariant (oracle_test.go) holds either way.
func TestEveryCSVAPlanCreatesOrReplacesIsDecided(t *testing.T) {
	for _, tc := range planCases {
		t.Run(tc.name, func(t *testing.T) {
			snap := tc.state(t)
			d := &approval.Decider{Reader: snap, Policies: casePolicies(t, tc.packs, tc.data), Now: func() time.Time { return caseNow }}
			v := judgeWaiting(t, d, snap)
			if tc.held == "" {
				assert.True(t, v.Approvable, v.WhyNot())
			} else {
				assert.False(t, v.Approvable, "the plan must be held")
				assert.Contains(t, v.WhyNot(), tc.held)
			}
			checkInvariant(t, snap, d, onlyPlan(t, snap), v)
		})
	}
}

// casePolicies compiles the embedded policies with packs and data (the embedded ones alone
// without packs).
func casePolicies(t *testing.T, packs []string, data map[string]any) approval.Evaluator {
	t.Helper()
	if len(packs) == 0 && data == nil {
		return embeddedEngine(t)
	}
	dirs := make([]string, 0, len(packs))
	for _, p := range packs {
		dirs = append(dirs, repo.Path("bundles", "packs", p))
	}
	src, err := policysource.LoadBundles(context.Background(), dirs, policysource.BundleOptions{Once: true, Log: logr.Discard()})
	require.NoError(t, err)
	e, err := engine.New(context.Background(), engine.Options{Bundles: src.Bundles(), Data: data})
	require.NoError(t, err)
	return e
}

func onlyPlan(t *testing.T, snap *snapshot.Snapshot) *v1alpha1.InstallPlan {
	t.Helper()
	var plans v1alpha1.InstallPlanList
	require.NoError(t, snap.List(context.Background(), &plans))
	require.Len(t, plans.Items, 1)
	return &plans.Items[0]
}

func judgeWaiting(t *testing.T, d *approval.Decider, snap *snapshot.Snapshot) approval.Verdict {
	t.Helper()
	v, err := d.Judge(context.Background(), onlyPlan(t, snap))
	require.NoError(t, err)
	require.Empty(t, v.Ineligible)
	return v
}

// edit is one change to a case's state.
type edit func(t *testing.T, snap *snapshot.Snapshot)

// bundled is the real bundled first install, gated, with edits.
func bundled(edits ...edit) func(t *testing.T) *snapshot.Snapshot {
	return func(t *testing.T) *snapshot.Snapshot {
		snap := gated(t, bundledFirstInstall)
		for _, e := range edits {
			e(t, snap)
		}
		return snap
	}
}

func add(t *testing.T, snap *snapshot.Snapshot, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		require.NoError(t, snap.Add(o))
	}
}

// addList adds every item of list to snap.
func addList(t *testing.T, snap *snapshot.Snapshot, list client.ObjectList) {
	t.Helper()
	items, err := meta.ExtractList(list)
	require.NoError(t, err)
	for _, it := range items {
		add(t, snap, it.(client.Object))
	}
}

// editPlan changes the one plan of snap.
func editPlan(t *testing.T, snap *snapshot.Snapshot, change func(p *v1alpha1.InstallPlan)) {
	t.Helper()
	p := onlyPlan(t, snap)
	change(p)
	require.NoError(t, snap.Upsert(p))
}

func withCSV(name string, phase v1alpha1.ClusterServiceVersionPhase, labels map[string]string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		add(t, snap, csvObject(bundledNS, name, "", phase, labels))
	}
}

func csvObject(ns, name, version string, phase v1alpha1.ClusterServiceVersionPhase, labels map[string]string) *v1alpha1.ClusterServiceVersion {
	return &v1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       v1alpha1.ClusterServiceVersionSpec{Version: version},
		Status:     v1alpha1.ClusterServiceVersionStatus{Phase: phase},
	}
}

// holdOwner makes the legacy operator's state one that must hold an upgrade of it.
type holdOwner func(t *testing.T, snap *snapshot.Snapshot)

// withOwner installs delta.v0.9.0 for Subscription legacy, of another package (a renamed
// one), with its gate, held as how says.
func withOwner(how holdOwner) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		sub := &v1alpha1.Subscription{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
			ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: "legacy"},
			Spec:       &v1alpha1.SubscriptionSpec{Package: "delta-legacy", Channel: "stable", CatalogSource: "real", CatalogSourceNamespace: "olm", InstallPlanApproval: v1alpha1.ApprovalManual},
			Status:     v1alpha1.SubscriptionStatus{CurrentCSV: "delta.v0.9.0", InstalledCSV: "delta.v0.9.0", State: v1alpha1.SubscriptionStateAtLatest},
		}
		add(t, snap, sub, csvObject(bundledNS, "delta.v0.9.0", "0.9.0", v1alpha1.CSVPhaseSucceeded, nil), gatestatus.New(sub))
		how(t, snap)
	}
}

func ownerNotUpgradeable(t *testing.T, snap *snapshot.Snapshot) {
	cond := metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Migrating", Message: "migrating storage", LastTransitionTime: metav1.NewTime(caseNow.Add(-time.Hour))}
	add(t, snap, &operatorsv2.OperatorCondition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v2", Kind: "OperatorCondition"},
		ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: "delta.v0.9.0"},
		Spec:       operatorsv2.OperatorConditionSpec{Conditions: []metav1.Condition{cond}},
		Status:     operatorsv2.OperatorConditionStatus{Conditions: []metav1.Condition{cond}},
	})
}

func ownerInAudit(t *testing.T, snap *snapshot.Snapshot) {
	g := &tollgatev1alpha1.UpgradeGate{}
	require.NoError(t, snap.Get(context.Background(), types.NamespacedName{Namespace: bundledNS, Name: "legacy"}, g))
	g.Spec.Mode = tollgatev1alpha1.ModeAudit
	require.NoError(t, snap.Upsert(g))
}

// stepManifest edits the manifest of the plan's step of kind for csv.
func stepManifest(t *testing.T, p *v1alpha1.InstallPlan, csv, kind string, change func(m map[string]any)) {
	t.Helper()
	for _, s := range p.Status.Plan {
		if s.Resolving == csv && s.Resource.Kind == kind {
			m := map[string]any{}
			require.NoError(t, json.Unmarshal([]byte(s.Resource.Manifest), &m))
			change(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			s.Resource.Manifest = string(b)
			return
		}
	}
	t.Fatalf("no %s step for %s", kind, csv)
}

func replacesInStep(r string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			stepManifest(t, p, "delta.v1.0.0", "ClusterServiceVersion", func(m map[string]any) {
				m["spec"].(map[string]any)["replaces"] = r
			})
		})
	}
}

func replacesInLookup(r string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			p.Status.BundleLookups = append(p.Status.BundleLookups, v1alpha1.BundleLookup{Identifier: "delta.v1.0.0", Replaces: r, Path: "example.com/delta-bundle:v1.0.0"})
		})
	}
}

func dependencySource(source string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			stepManifest(t, p, "delta.v1.0.0", "Subscription", func(m map[string]any) {
				m["spec"].(map[string]any)["source"] = source
			})
		})
	}
}

func withCatalog(name, state string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		add(t, snap, &v1alpha1.CatalogSource{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "CatalogSource"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: name},
			Spec:       v1alpha1.CatalogSourceSpec{SourceType: "grpc", Image: "example.com/catalog:latest"},
			Status:     v1alpha1.CatalogSourceStatus{GRPCConnectionState: &v1alpha1.GRPCConnectionState{LastObservedState: state}},
		})
	}
}

func extraSubscriptionStep(pkg string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			manifest := `{"metadata":{"name":"` + pkg + `"},"spec":{"source":"real","sourceNamespace":"olm","name":"` + pkg + `","startingCSV":"delta.v1.0.0"}}`
			step := &v1alpha1.Step{Resolving: "delta.v1.0.0", Status: "Unknown", Resource: v1alpha1.StepResource{
				Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription", Name: pkg, Manifest: manifest}}
			p.Status.Plan = append([]*v1alpha1.Step{step}, p.Status.Plan...)
		})
	}
}

func withFollower(pkg, current string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		sub := &v1alpha1.Subscription{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
			ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: pkg},
			Spec:       &v1alpha1.SubscriptionSpec{Package: pkg, Channel: "stable", CatalogSource: "real", CatalogSourceNamespace: "olm", InstallPlanApproval: v1alpha1.ApprovalManual},
			Status:     v1alpha1.SubscriptionStatus{CurrentCSV: current, InstalledCSV: current},
		}
		add(t, snap, sub, gatestatus.New(sub))
	}
}

func withPackage(pkg, head, version, createdAt string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		add(t, snap, &packagesv1.PackageManifest{
			TypeMeta:   metav1.TypeMeta{APIVersion: "packages.operators.coreos.com/v1", Kind: "PackageManifest"},
			ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: pkg},
			Status: packagesv1.PackageManifestStatus{CatalogSource: "real", CatalogSourceNamespace: "olm", PackageName: pkg, DefaultChannel: "stable",
				Channels: []packagesv1.PackageChannel{{Name: "stable", CurrentCSV: head,
					CurrentCSVDesc: packagesv1.CSVDescription{Version: version, Annotations: map[string]string{"createdAt": createdAt}},
					Entries:        []packagesv1.ChannelEntry{{Name: head, Version: version}}}}},
		})
	}
}

func onlyDependency(t *testing.T, snap *snapshot.Snapshot) {
	editPlan(t, snap, func(p *v1alpha1.InstallPlan) { p.Spec.ClusterServiceVersionNames = []string{"delta.v1.0.0"} })
}

func brokenStep(t *testing.T, snap *snapshot.Snapshot) {
	editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
		for _, s := range p.Status.Plan {
			if s.Resolving == "delta.v1.0.0" && s.Resource.Kind == "ClusterServiceVersion" {
				s.Resource.Manifest = `{"spec": {"replaces": "delta.v0.9.0"` // cut short
			}
		}
	})
}

// upgrade is a state where Subscription etcd of namespace upgrades, on a plan of its own,
// from installed (a CSV without spec.version) to current, with edits to the plan.
func upgrade(installed, current string, edits ...edit) func(t *testing.T) *snapshot.Snapshot {
	return func(t *testing.T) *snapshot.Snapshot {
		sub := &v1alpha1.Subscription{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
			ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: "etcd"},
			Spec:       &v1alpha1.SubscriptionSpec{Package: "etcd", Channel: "stable", CatalogSource: "real", CatalogSourceNamespace: "olm", InstallPlanApproval: v1alpha1.ApprovalManual},
			Status: v1alpha1.SubscriptionStatus{CurrentCSV: current, InstalledCSV: installed, State: v1alpha1.SubscriptionStateUpgradePending,
				InstallPlanRef: &corev1.ObjectReference{Namespace: bundledNS, Name: "install-up"}},
		}
		p := &v1alpha1.InstallPlan{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan"},
			ObjectMeta: metav1.ObjectMeta{Namespace: bundledNS, Name: "install-up"},
			Spec:       v1alpha1.InstallPlanSpec{Approval: v1alpha1.ApprovalManual, ClusterServiceVersionNames: []string{current}},
			Status:     &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval},
		}
		snap := snapshot.New()
		real := gated(t, bundledFirstInstall)
		for _, list := range []client.ObjectList{&v1alpha1.CatalogSourceList{}, &operatorsv1.OperatorGroupList{}} {
			require.NoError(t, real.List(context.Background(), list))
			addList(t, snap, list)
		}
		add(t, snap, sub, gatestatus.New(sub), p, csvObject(bundledNS, installed, "", v1alpha1.CSVPhaseSucceeded, nil))
		for _, e := range edits {
			e(t, snap)
		}
		return snap
	}
}

// lookupVersion gives the upgrade's CSV a bundle lookup whose olm.package property has v.
func lookupVersion(v string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		editPlan(t, snap, func(p *v1alpha1.InstallPlan) {
			csv := p.Spec.ClusterServiceVersionNames[0]
			props := `{"properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"` + v + `"}}]}`
			p.Status.BundleLookups = append(p.Status.BundleLookups, v1alpha1.BundleLookup{Identifier: csv, Path: "example.com/etcd-bundle", Properties: props})
		})
	}
}

// packageVersion has the PackageManifest give the upgrade's CSV version v.
func packageVersion(v string) edit {
	return func(t *testing.T, snap *snapshot.Snapshot) {
		p := onlyPlan(t, snap)
		withPackage("etcd", p.Spec.ClusterServiceVersionNames[0], v, "2026-11-01T00:00:00Z")(t, snap)
	}
}
