package olmv1

import (
	"fmt"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
)

// gatedWorld is a world serving the catalog folder revision (under the sample), with the
// sample installed at 1.0.0 by a ClusterExtension named after the package, and Tollgate
// running, allowed to read its operands.
func gatedWorld(t *testing.T, revision string) *world {
	w := newWorld(t)
	w.serveCatalog(catalogName)
	if revision != "catalog" {
		w.republish(revision)
	}
	w.createExtension(pkgName, "1.0.0")
	w.waitInstalled(pkgName, "1.0.0")
	w.applyRBAC()
	w.grantWidgetRead()
	w.startTollgate()
	return w
}

// TestGateMovesThePinToTheHighestAllowedSuccessor: within the gate's range Tollgate pins the
// highest successor, and OLM v1 installs it; widening the range moves the pin again. Each pin
// carries the record of its decision.
func TestGateMovesThePinToTheHighestAllowedSuccessor(t *testing.T) {
	w := gatedWorld(t, "catalog-v2")
	w.fixture("ungated-1.0.0", "tollgate-demo 1.0.0 installed, catalog revision 2 (1.1.0 and 1.2.0) served, no ExtensionGate yet")

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{Version: "<1.2.0"})
	w.waitInstalled(pkgName, "1.1.0")
	rec, ok := w.pinRecord(pkgName)
	require.True(t, ok, "the pin's record")
	require.Equal(t, "1.1.0", rec.Version)
	require.Equal(t, "1.0.0", rec.Installed)
	require.NotEmpty(t, rec.PolicyRevision)
	require.NotEmpty(t, rec.InputDigest)

	w.editGate(pkgName, func(s *tollgatev1alpha1.ExtensionGateSpec) { s.Version = "" })
	w.waitInstalled(pkgName, "1.2.0")
	g := w.waitGate(pkgName, "pinned at 1.2.0", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Installed == "1.2.0" && g.Status.Pin == "1.2.0" && pinOwned("Pinned")(g)
	})
	require.Empty(t, g.Status.Candidates, "nothing succeeds 1.2.0")
	w.stopTollgate() // its decision log is flushed

	logged, err := decisionlog.ReadFile(w.decisionLog())
	require.NoError(t, err)
	var pins []string
	for _, l := range logged {
		if l.Event.Path == decisionlog.PathPin {
			require.True(t, l.Decision.Allowed, "a pin logged with the decision that allowed it")
			pins = append(pins, fmt.Sprint(l.Event.Result.(map[string]any)["to"]))
		}
	}
	require.Equal(t, []string{"1.1.0", "1.2.0"}, pins, "every pin logged, once")
	e, err := engine.New(w.ctx, engine.Options{})
	require.NoError(t, err)
	report := replay.Replay(w.ctx, e, logged)
	require.Zero(t, report.Different+report.InputEdited+report.NotReplayable, "every logged decision replays the same: %+v", report.Events)
}

// TestFreezeHoldsThenLifts: the freeze pack holds the upgrade; the pin stays and the gate says
// why; once the freeze is lifted the pin moves.
func TestFreezeHoldsThenLifts(t *testing.T) {
	w := gatedWorld(t, "catalog")
	w.policyConfigMap("freeze-pack", policysource.KindRego, map[string]string{"freeze.rego": pack("freeze")})
	w.policyConfigMap("freeze-periods", policysource.KindData, map[string]string{"freeze.json": freezeNow()})

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	g := w.waitGate(pkgName, "held by the freeze", both(heldBy("ChangeFreeze"), pinOwned("Held")))
	require.True(t, contains(g, "quarter-end close"), "the denial says why: %+v", g.Status.Decision)
	code, held := heldMetric(t, pkgName)
	require.True(t, held && code == "ChangeFreeze", "tollgate_held_extensions says why: %q", code)
	w.stillPinned(pkgName, "1.0.0")
	w.fixture("freeze-held", "a change freeze holds tollgate-demo 1.1.0; the pin stays at 1.0.0")
	w.requireSnapshotAgrees(pkgName)

	require.NoError(t, w.c.Delete(w.ctx, configMap("freeze-periods")))
	w.waitInstalled(pkgName, "1.1.0")
	w.waitGate(pkgName, "pinned at 1.1.0", pinOwned("Pinned"))
	_, held = heldMetric(t, pkgName)
	require.False(t, held, "nothing held: no series")
}

// TestASameVersionRebuildIsReportedNotHeld: the vendor deprecates the installed 1.0.0 and
// publishes a rebuild of the same version (1.0.0+1), which a freeze denies. No exact pin
// excludes it: OLM v1 matches a pin ignoring build metadata and prefers the bundle not
// deprecated, so at Tollgate's unchanged pin it installs the rebuild. Tollgate says so plainly
// (a Warning event DeniedBundleAdmitted naming the bundle), and never calls it held.
func TestASameVersionRebuildIsReportedNotHeld(t *testing.T) {
	w := gatedWorld(t, "catalog")
	w.policyConfigMap("freeze-pack", policysource.KindRego, map[string]string{"freeze.rego": pack("freeze")})
	w.policyConfigMap("freeze-periods", policysource.KindData, map[string]string{"freeze.json": freezeNow()})
	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	w.waitGate(pkgName, "held by the freeze", both(heldBy("ChangeFreeze"), pinOwned("Held")))

	w.republish("catalog-rebuilt")
	w.waitEvent(pkgName, tollgatev1alpha1.ConditionDeniedBundleAdmitted)
	w.waitFor(clusterExtensionKind, pkgName, "the rebuild installed by OLM v1 at the pin 1.0.0", func(u *unstructured.Unstructured) bool {
		return nestedString(u, "status", "install", "bundle", "name") == "tollgate-demo.v1.0.0-rebuild"
	})
	require.Equal(t, "1.0.0", nestedString(w.get(clusterExtensionKind, pkgName), "spec", "source", "catalog", "version"), "the pin did not move")
	g := w.waitGate(pkgName, "decided on the rebuild installed", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Installed == "1.0.0+1"
	})
	require.False(t, pinOwned("Unexcludable")(g), "once installed, the rebuild is what the pin stays on: %+v", g.Status.Conditions)
}

// TestDegradedOperandHolds: an operand of the installed bundle that reports Degraded=True holds
// the upgrade until it heals.
func TestDegradedOperandHolds(t *testing.T) {
	w := gatedWorld(t, "catalog")
	widget := w.widget("main", metav1.ConditionTrue, "replica lost")

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	w.waitGate(pkgName, "held by the degraded widget", both(heldBy("OperatorDegraded"), pinOwned("Held")))
	w.stillPinned(pkgName, "1.0.0")
	w.fixture("operand-degraded-held", "a Widget reports Degraded=True; tollgate-demo 1.1.0 is held at 1.0.0")
	w.requireSnapshotAgrees(pkgName)

	w.setWidgetDegraded(widget, metav1.ConditionFalse, "replica back")
	w.waitInstalled(pkgName, "1.1.0")
}

// TestCatalogNotServingHolds: a selected catalog catalogd does not serve (its image cannot be
// pulled) holds every upgrade: its content, which OLM v1 could install from, cannot be read,
// and OLM v1 itself resolves nothing while it is selected. An Unavailable catalog is another
// matter: OLM v1 ignores it, and so does Tollgate (TestUnavailableCatalogIsIgnored).
func TestCatalogNotServingHolds(t *testing.T) {
	w := gatedWorld(t, "catalog")
	w.create(clusterCatalog("unserved", strings.Replace(w.registry.catalogRef(), ":"+catalogTag, ":absent", 1)))
	w.selectEveryCatalog(pkgName)

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	w.waitGate(pkgName, "held: a selected catalog is not Serving", both(heldBy("CatalogNotServing"), pinOwned("Held")))
	w.stillPinned(pkgName, "1.0.0")
	w.fixture("catalog-not-serving-held", "a selected ClusterCatalog is not served (its image cannot be pulled): every upgrade of tollgate-demo holds")

	w.delete(clusterCatalogKind, "unserved")
	w.waitInstalled(pkgName, "1.1.0")
}

// TestUnavailableCatalogIsIgnored: a second catalog an admin set Unavailable holds nothing, as
// OLM v1 ignores it.
func TestUnavailableCatalogIsIgnored(t *testing.T) {
	w := gatedWorld(t, "catalog")
	w.create(clusterCatalog("switched-off", w.registry.catalogRef()))
	w.setAvailability("switched-off", "Unavailable")
	w.selectEveryCatalog(pkgName)

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	w.waitInstalled(pkgName, "1.1.0")
}

// TestSamePriorityCatalogsAreNoPin: two selected catalogs of the same priority serve the next
// version; real OLM v1 refuses to choose ("multiple catalogs with the same priority"), so
// Tollgate does not pin it, and says why; once one catalog ranks lower, the pin moves.
func TestSamePriorityCatalogsAreNoPin(t *testing.T) {
	w := gatedWorld(t, "catalog")
	w.create(clusterCatalog("twin", w.registry.catalogRef()))
	w.waitFor(clusterCatalogKind, "twin", "Serving", func(u *unstructured.Unstructured) bool {
		return conditionIs(u, "Serving", metav1.ConditionTrue, "Available")
	})
	w.selectEveryCatalog(pkgName)

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	w.waitGate(pkgName, "1.1.0 refused as ambiguous", func(g *tollgatev1alpha1.ExtensionGate) bool {
		c := apimeta.FindStatusCondition(g.Status.Conditions, tollgatev1alpha1.ConditionPinOwned)
		return c != nil && strings.Contains(c.Message, "1.1.0 (catalogs tollgate-demo-catalog, twin of the same priority serve it)")
	})
	require.Equal(t, "1.0.0", nestedString(w.get(clusterExtensionKind, pkgName), "spec", "source", "catalog", "version"))
	w.waitFor(clusterExtensionKind, pkgName, "OLM v1 refusing the same ambiguity at 1.0.0", func(u *unstructured.Unstructured) bool {
		c := condition(u, "Progressing")
		return c != nil && strings.Contains(c.Message, "in multiple catalogs with the same priority")
	})

	u := w.get(clusterCatalogKind, "twin")
	before := u.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(-1), "spec", "priority"))
	require.NoError(t, w.c.Patch(w.ctx, u, client.MergeFrom(before)))
	w.waitInstalled(pkgName, "1.1.0")
}

// TestSelfCertifiedNeverPinsADowngrade: under upgradeConstraintPolicy SelfCertified OLM v1
// follows no upgrade edge and would install a lower version if pinned there; Tollgate keeps the
// pin at the installed version when nothing higher is served.
func TestSelfCertifiedNeverPinsADowngrade(t *testing.T) {
	w := newWorld(t)
	w.serveCatalog(catalogName)
	w.createExtension(pkgName, "1.1.0")
	w.waitInstalled(pkgName, "1.1.0")
	u := w.get(clusterExtensionKind, pkgName)
	before := u.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(u.Object, "SelfCertified", "spec", "source", "catalog", "upgradeConstraintPolicy"))
	require.NoError(t, w.c.Patch(w.ctx, u, client.MergeFrom(before)))
	w.applyRBAC()
	w.grantWidgetRead()
	w.startTollgate()

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	w.waitGate(pkgName, "pinned at the installed 1.1.0", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.1.0" && pinOwned("Pinned")(g)
	})
	w.stillPinned(pkgName, "1.1.0")
}

// TestDeprecatedBundleHolds: a bundle the catalog deprecates is held until an admin waives it.
func TestDeprecatedBundleHolds(t *testing.T) {
	w := gatedWorld(t, "catalog-deprecated")

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{})
	g := w.waitGate(pkgName, "held: 1.1.0 is deprecated", both(heldBy("BundleDeprecated"), pinOwned("Held")))
	require.True(t, contains(g, "loses widgets"), "the denial carries the catalog's message: %+v", g.Status.Decision)
	w.stillPinned(pkgName, "1.0.0")
	w.fixture("deprecated-held", "the catalog deprecates tollgate-demo 1.1.0: held at 1.0.0")
	w.requireSnapshotAgrees(pkgName)

	w.editGate(pkgName, func(s *tollgatev1alpha1.ExtensionGateSpec) {
		s.Overrides = []tollgatev1alpha1.Override{{Code: "BundleDeprecated", Reason: "widgets backed up"}}
	})
	w.waitInstalled(pkgName, "1.1.0")
}

// TestEmptyVersionIsTakenBack: an extension left with an empty version (every successor) is
// pinned at its installed version when gated, and stays there when the catalog publishes a
// successor outside the gate's range.
func TestEmptyVersionIsTakenBack(t *testing.T) {
	w := newWorld(t)
	w.serveCatalog(catalogName)
	w.createExtension(pkgName, "")
	w.waitInstalled(pkgName, "1.1.0")
	w.applyRBAC()
	w.startTollgate()

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{Version: "<1.2.0"})
	w.waitFor(clusterExtensionKind, pkgName, "pinned at 1.1.0", func(u *unstructured.Unstructured) bool {
		return nestedString(u, "spec", "source", "catalog", "version") == "1.1.0"
	})
	rec, ok := w.pinRecord(pkgName)
	require.True(t, ok, "the pin's record")
	require.NotNil(t, rec.TookBackFrom, "the record says the pin was taken back")
	require.Empty(t, *rec.TookBackFrom, "from no version at all")
	w.waitEvent(pkgName, "PinReclaimed")

	digest := w.republish("catalog-v2")
	w.waitGate(pkgName, "decided on revision 2", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return len(g.Status.Catalogs) == 1 && g.Status.Catalogs[0] == catalogName+"@"+digest
	})
	w.waitInstalled(pkgName, "1.1.0")
	w.stillPinned(pkgName, "1.1.0")
}

// TestRestartMovesNothingTwice: a Tollgate restarted while OLM v1 installs the pin it set
// leaves the pin alone; a decision after the restart moves it once.
func TestRestartMovesNothingTwice(t *testing.T) {
	w := gatedWorld(t, "catalog-v2")

	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{Version: "<1.2.0"})
	moved := w.waitFor(clusterExtensionKind, pkgName, "pinned at 1.1.0", func(u *unstructured.Unstructured) bool {
		return nestedString(u, "spec", "source", "catalog", "version") == "1.1.0"
	})
	w.stopTollgate()
	w.startTollgate()
	w.waitInstalled(pkgName, "1.1.0")
	w.waitGate(pkgName, "settled at 1.1.0", pinOwned("Pinned"))
	require.Equal(t, moved.GetGeneration(), w.get(clusterExtensionKind, pkgName).GetGeneration(), "the restarted Tollgate wrote no pin")

	w.editGate(pkgName, func(s *tollgatev1alpha1.ExtensionGateSpec) { s.Version = "" })
	settled := w.waitInstalled(pkgName, "1.2.0")
	require.Equal(t, moved.GetGeneration()+1, settled.GetGeneration(), "one pin, one generation")
}

func configMap(name string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(policyNS)
	u.SetName(name)
	return u
}
