package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// The policy packs (bundles/packs) are loaded as OPA bundles, the way `tollgate run --bundle`
// loads them, and run with the embedded policies on documents gathered from a cluster state as
// a real cluster holds it: objects with creation timestamps, a new CSV that does not exist yet,
// createdAt annotations written the ways operator authors write them. No evaluation may raise a
// built-in error (Result.Warnings): the engine turns an allowed decision reached with one into a
// PolicyError, which no override lifts, so a pack that raises one on real data blocks every
// upgrade it looks at.

var packsDir = repo.Path("bundles", "packs")

// packCase is one document run through some packs (with the embedded policies).
type packCase struct {
	name   string
	packs  []string       // the packs loaded, each as its own bundle
	data   map[string]any // data.tollgate.config
	world  func() *world  // default realistic
	mutate func(w *world)
	doc    func(doc map[string]any) // edits the gathered document (what the typed objects cannot carry)
	// denials are the standing denial codes, sorted; overridden the waived ones.
	denials    []string
	overridden []string
}

var (
	packEnginesMu sync.Mutex
	packEngines   = map[string]*engine.Engine{}
)

// packEngine compiles the embedded policies with the named packs, each loaded from its
// directory as an OPA bundle, and the configuration data. Engines are shared by equal inputs.
func packEngine(t *testing.T, packs []string, data map[string]any) *engine.Engine {
	t.Helper()
	packEnginesMu.Lock()
	defer packEnginesMu.Unlock()
	key := filepath.Join(packs...) + " " + stringOf(data)
	if e, ok := packEngines[key]; ok {
		return e
	}
	dirs := make([]string, 0, len(packs))
	for _, p := range packs {
		dirs = append(dirs, filepath.Join(packsDir, p))
	}
	src, err := policysource.LoadBundles(context.Background(), dirs, policysource.BundleOptions{Once: true, Log: logr.Discard()})
	require.NoError(t, err, "load packs %v as bundles", packs)
	e, err := engine.New(context.Background(), engine.Options{Bundles: src.Bundles(), Data: data})
	require.NoError(t, err, "compile packs %v", packs)
	packEngines[key] = e
	return e
}

func stringOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// newCSV is the name of the version upgradeWaiting's plan brings in realistic: CSV names end in
// a semantic version (etcdoperator.v0.9.4), which is where the version pack reads it while the
// new CSV does not exist yet.
const newCSV = "etcd.v2.0.0"

// realistic is upgradeWaiting as a cluster holds it: every object has a creationTimestamp (the
// new version's InstallPlan appeared two days before now, the rest a month before), the new
// CSV's name ends in its version, and the new CSV does not exist yet (null in the document):
// OLM creates it when the approved plan runs.
func realistic() *world {
	w := upgradeWaiting()
	month := metav1.NewTime(now.Add(-30 * 24 * time.Hour))
	for _, o := range w.objects() {
		o.SetCreationTimestamp(month)
	}
	w.plan.CreationTimestamp = metav1.NewTime(now.Add(-48 * time.Hour))
	w.sub.Status.CurrentCSV = newCSV
	w.plan.Spec.ClusterServiceVersionNames = []string{newCSV}
	w.pkg.Status.Channels[0].CurrentCSV = newCSV
	w.current = nil
	return w
}

// withNewCSV is realistic with the new CSV present (as while its plan runs), created with the
// plan and annotated createdAt unless that is "".
func withNewCSV(createdAt string) func(w *world) {
	return func(w *world) {
		w.current = csv("etcd.v2", "Pending")
		w.current.Name = newCSV
		w.current.Spec.Version = "2.0.0"
		w.current.CreationTimestamp = w.plan.CreationTimestamp
		if createdAt != "" {
			w.current.Annotations = map[string]string{"createdAt": createdAt}
		}
	}
}

// channelCreatedAt puts createdAt into the PackageManifest's channel entry (currentCSVDesc), as
// the packages API serves it; the typed PackageManifest the input is gathered through does not
// carry currentCSVDesc (yet).
func channelCreatedAt(createdAt string) func(doc map[string]any) {
	return func(doc map[string]any) {
		pm := doc["packageManifest"].(map[string]any)
		channels := pm["status"].(map[string]any)["channels"].([]any)
		channels[0].(map[string]any)["currentCSVDesc"] = map[string]any{
			"version":     "2.0.0",
			"annotations": map[string]any{"createdAt": createdAt},
		}
	}
}

func overrideCode(code string) func(w *world) {
	return func(w *world) {
		w.gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: code, Reason: "CHG-1234: checked by the platform team"}}
	}
}

func firstInstall() *world {
	w := realistic()
	w.sub.Status.InstalledCSV = ""
	w.installed = nil
	w.opCond = nil
	w.operands = nil
	return w
}

func published(extra map[string]any) map[string]any {
	soak := map[string]any{"basis": "published"}
	for k, v := range extra {
		soak[k] = v
	}
	return map[string]any{"packs": map[string]any{"soak": soak}}
}

// The createdAt layouts operator authors write (all of them before now minus a day).
var createdAtLayouts = []string{
	"2019-08-19T12:00:00Z",
	"2019-08-19T12:00:00.000Z",
	"2019-08-19T14:00:00+02:00",
	"2019-08-19 12:00:00",
	"2019-08-19T12:00:00",
	"2019-08-19",
}

func TestPacksOnRealData(t *testing.T) {
	cases := slices.Concat(everyPackCases(), soakPackCases(), versionPackCases(), calendarPackCases(),
		firstInstallPackCases(), createdAtLayoutCases())
	exercised := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runPackCase(t, tc) })
		for _, p := range tc.packs {
			exercised[p] = true
		}
	}

	// A pack added to bundles/packs is run here too, or this test says so.
	entries, err := os.ReadDir(packsDir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			assert.True(t, exercised[e.Name()], "pack %s is not run on real data here: add cases for it", e.Name())
		}
	}
}

// runPackCase evaluates the case's document with its packs and checks the denials: no
// PolicyError, no built-in error, facts on every denial and remedies on every standing one.
func runPackCase(t *testing.T, tc packCase) {
	build := tc.world
	if build == nil {
		build = realistic
	}
	w := build()
	if tc.mutate != nil {
		tc.mutate(w)
	}
	doc := w.input(t)
	if tc.doc != nil {
		tc.doc(doc)
	}
	r := packEngine(t, tc.packs, tc.data).Evaluate(context.Background(), doc)
	require.NoError(t, r.Err, "a PolicyError: %v", r.Decision.Denials)
	assert.Empty(t, r.Warnings, "built-in errors")

	var standing, overridden []string
	for _, d := range r.Decision.Denials {
		assert.NotEqual(t, tollgatev1alpha1.CodePolicyError, d.Code, d.Message)
		assert.NotEmpty(t, d.Facts, "denial %s has facts", d.Code)
		if d.Overridden {
			overridden = append(overridden, d.Code)
		} else {
			assert.NotEmpty(t, d.Lift, "denial %s has remedies", d.Code)
			standing = append(standing, d.Code)
		}
	}
	slices.Sort(standing)
	assert.Equal(t, tc.denials, standing, "standing denials: %v", r.Decision.Denials)
	assert.Equal(t, tc.overridden, overridden, "overridden denials")
	assert.Equal(t, len(tc.denials) == 0, r.Decision.Allowed, "allowed")
}

// everyPack is every pack, each loaded as its own bundle.
var everyPack = []string{"firstinstall", "freeze", "soak", "version", "window"}

// everyPackCases run every pack together with its defaults.
func everyPackCases() []packCase {
	return []packCase{{
		name:  "every pack with its defaults: only the major jump is held",
		packs: everyPack,
		// 1.0.0 (the installed CSV's spec.version) → 2.0.0 (the new CSV's name)
		denials: []string{"MajorVersionUpgrade"},
	}, {
		name:    "every pack with its defaults, the new CSV present",
		packs:   everyPack,
		mutate:  withNewCSV("2024-04-01T00:00:00Z"),
		denials: []string{"MajorVersionUpgrade"},
	}}
}

// soakPackCases: the soak pack, from the plan's creationTimestamp and from createdAt.
func soakPackCases() []packCase {
	return []packCase{{
		name:    "soak: a plan created two days ago has soaked the default 24 hours",
		packs:   []string{"soak"},
		denials: nil,
	}, {
		name:    "soak: a plan created an hour ago has not",
		packs:   []string{"soak"},
		mutate:  func(w *world) { w.plan.CreationTimestamp = earlier },
		denials: []string{"SoakTimeNotElapsed"},
	}, {
		name:    "soak: without any creationTimestamp the start is unknown",
		packs:   []string{"soak"},
		world:   upgradeWaiting,
		denials: []string{"SoakStartUnknown"},
	}, {
		name:       "soak: an unknown start can be overridden",
		packs:      []string{"soak"},
		world:      upgradeWaiting,
		mutate:     overrideCode("SoakStartUnknown"),
		overridden: []string{"SoakStartUnknown"},
	}, {
		name:    "soak, basis published: a CSV without createdAt has an unknown start",
		packs:   []string{"soak"},
		data:    published(nil),
		mutate:  withNewCSV(""),
		denials: []string{"SoakStartUnknown"},
	}, {
		name:    "soak, basis published: no new CSV and no PackageManifest entry: unknown start",
		packs:   []string{"soak"},
		data:    published(nil),
		denials: []string{"SoakStartUnknown"},
	}, {
		name:    "soak, basis published: a createdAt in no known layout is an unknown start, not a PolicyError",
		packs:   []string{"soak"},
		data:    published(nil),
		mutate:  withNewCSV("Mon Aug 19 12:00:00 UTC 2019"),
		denials: []string{"SoakStartUnknown"},
	}, {
		name:       "soak, basis published: an unreadable createdAt can be overridden",
		packs:      []string{"soak"},
		data:       published(nil),
		mutate:     func(w *world) { withNewCSV("19/08/2019")(w); overrideCode("SoakStartUnknown")(w) },
		overridden: []string{"SoakStartUnknown"},
	}, {
		name:    "soak, basis published: a fresh createdAt is held",
		packs:   []string{"soak"},
		data:    published(nil),
		mutate:  withNewCSV(now.Add(-time.Hour).UTC().Format("2006-01-02 15:04:05")),
		denials: []string{"SoakTimeNotElapsed"},
	}, {
		name:  "soak, basis published: createdAt in the PackageManifest",
		packs: []string{"soak"},
		data:  published(nil),
		doc:   channelCreatedAt("2019-08-19 12:00:00"),
	}, {
		name:    "soak, basis published: an unreadable createdAt in the PackageManifest",
		packs:   []string{"soak"},
		data:    published(nil),
		doc:     channelCreatedAt("August 2019"),
		denials: []string{"SoakStartUnknown"},
	}}
}

// versionPackCases: the version pack, with the new CSV's version read from each place it can be.
func versionPackCases() []packCase {
	return []packCase{{
		name:    "version: the new CSV does not exist yet (null in the document): its version comes from its name",
		packs:   []string{"version"},
		data:    map[string]any{"packs": map[string]any{"version": map[string]any{"holdMajor": false}}},
		denials: nil,
	}, {
		name:  "version: the new CSV's version from the PackageManifest",
		packs: []string{"version"},
		data:  map[string]any{"packs": map[string]any{"version": map[string]any{"allowed": []any{"^2.0.0"}}}},
		doc:   channelCreatedAt("2019-08-19"),
		// allowed, but a major jump
		denials: []string{"MajorVersionUpgrade"},
	}, {
		name:  "version: the version of a CSV that does not exist and has no semantic name is unknown",
		packs: []string{"version"},
		mutate: func(w *world) {
			w.sub.Status.CurrentCSV = "etcd.v2"
			w.plan.Spec.ClusterServiceVersionNames = []string{"etcd.v2"}
			w.pkg.Status.Channels[0].CurrentCSV = "etcd.v2"
		},
		denials: []string{"VersionUnknown"},
	}, {
		name:    "version: an installed CSV that is missing",
		packs:   []string{"version"},
		mutate:  func(w *world) { w.installed = nil },
		denials: []string{"InstalledCSVMissing", "VersionUnknown"},
	}, {
		name:    "version: a major jump read from the new CSV's spec.version",
		packs:   []string{"version"},
		mutate:  withNewCSV(""),
		denials: []string{"MajorVersionUpgrade"},
	}}
}

// calendarPackCases: the window and freeze packs.
func calendarPackCases() []packCase {
	return []packCase{{
		name:  "window: an open window",
		packs: []string{"window"},
		data:  windows(map[string]any{"start": "00:00", "end": "24:00", "timeZone": "Europe/Berlin"}),
	}, {
		name:    "window: outside every window",
		packs:   []string{"window"},
		data:    windows(map[string]any{"days": []any{"Sat", "Sun"}, "start": "02:00", "end": "06:00", "timeZone": "America/New_York"}),
		denials: []string{"OutsideMaintenanceWindow"},
	}, {
		name:  "freeze: before a freeze",
		packs: []string{"freeze"},
		data:  freezes(map[string]any{"start": "2024-12-20T00:00:00Z", "end": "2025-01-06T00:00:00+01:00"}),
	}, {
		name:    "freeze: during a freeze",
		packs:   []string{"freeze"},
		data:    freezes(map[string]any{"start": "2024-04-30T00:00:00Z", "end": "2024-05-06T00:00:00.5+02:00", "reason": "release week"}),
		denials: []string{"ChangeFreeze"},
	}}
}

// firstInstallPackCases: the firstinstall pack on an upgrade and on first installs.
func firstInstallPackCases() []packCase {
	return []packCase{{
		name:  "firstinstall: an upgrade is not its concern",
		packs: []string{"firstinstall"},
	}, {
		name:    "firstinstall: a first install waits for an admin",
		packs:   []string{"firstinstall"},
		world:   firstInstall,
		denials: []string{"FirstInstallNotApproved"},
	}, {
		name:  "firstinstall: a first install an allow rule matches",
		packs: []string{"firstinstall"},
		world: firstInstall,
		data:  map[string]any{"packs": map[string]any{"firstinstall": map[string]any{"allow": []any{map[string]any{"namespace": "oper*", "source": "olm/{operatorhubio,community}"}}}}},
	}}
}

// createdAtLayoutCases run the soak pack alone and every pack on each createdAt layout.
func createdAtLayoutCases() []packCase {
	var cases []packCase
	for _, layout := range createdAtLayouts {
		cases = append(cases, packCase{
			name:   "soak, basis published: createdAt " + layout,
			packs:  []string{"soak"},
			data:   published(nil),
			mutate: withNewCSV(layout),
		}, packCase{
			name:   "every pack, basis published: createdAt " + layout,
			packs:  everyPack,
			data:   map[string]any{"packs": map[string]any{"soak": map[string]any{"basis": "published"}, "version": map[string]any{"holdMajor": false}}},
			mutate: withNewCSV(layout),
		})
	}
	return cases
}

func windows(ws ...map[string]any) map[string]any {
	list := make([]any, 0, len(ws))
	for _, w := range ws {
		list = append(list, w)
	}
	return map[string]any{"packs": map[string]any{"window": map[string]any{"windows": list}}}
}

func freezes(ps ...map[string]any) map[string]any {
	list := make([]any, 0, len(ps))
	for _, p := range ps {
		list = append(list, p)
	}
	return map[string]any{"packs": map[string]any{"freeze": map[string]any{"periods": list}}}
}
