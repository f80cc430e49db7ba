package engine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// The golden results: every input document the repository holds, evaluated by the embedded
// policies, must give exactly the result recorded under testdata/golden, field for field. It
// is what lets the policies be reworked for speed: a rework that changes one character of one
// result fails here. `go test ./engine/ -run TestGoldenResults -update` records the current
// policies' results (and removes the files of inputs that are gone).
//
// The inputs, each named by where it comes from:
//
//   - scenario/: the scenario tables of scenarios_test.go, gathered as those tests gather them,
//     and every other document the gathering evaluates (a bundled plan's peers);
//   - world/: the benchmark inputs, and the worlds of the recheck and limits tests that the
//     scenario tables do not cover (overrides with expiries, thousands of operands or
//     conditions);
//   - rego/: every distinct input document the Rego tests under policies/ evaluate with
//     (`with input as`), found by tracing `opa test`;
//   - snapshot/: every document Tollgate evaluates when it decides the Subscriptions and judges
//     the InstallPlans of each snapshot under test/testdata (the scenario, agreement, decoy and
//     real-OLM fixtures) and of each input-building fuzz corpus (input, snapshot, approval), as
//     `tollgate eval` does. A file that does not load as a snapshot decides nothing and is
//     skipped. (engine/testdata/fuzz holds policy results, not inputs: FuzzDecodeResult.)
//
// What is masked, because it names the policy text rather than the decision: the policy
// revision (a hash of the sources) and the row in a denial's source ("upgrade/upgrade.rego:N
// (deny: <title>)"; the file and the rule's title stay).

var update = flag.Bool("update", false, "record the current policies' results under testdata/golden")

const goldenDir = "testdata/golden"

// goldenNow is the clock of the snapshot inputs (the scenario worlds have their own, now).
var goldenNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// goldenCase is one input document, with the policy data it is evaluated with.
type goldenCase struct {
	name string
	data map[string]any
	doc  map[string]any
}

// goldenRecord is what a golden file holds.
type goldenRecord struct {
	// Input is the sha256 of the input and data, so a changed input says so instead of
	// showing up as a changed result.
	Input  string         `json:"input"`
	Err    string         `json:"err,omitempty"`
	Result *engine.Result `json:"result"`
}

func TestGoldenResults(t *testing.T) {
	cases := goldenCases(t)
	files := map[string]bool{}
	for _, c := range cases {
		file := filepath.Join(goldenDir, filepath.FromSlash(c.name)+".json")
		require.False(t, files[file], "two inputs named %s", c.name)
		files[file] = true
		t.Run(c.name, func(t *testing.T) {
			got := goldenJSON(t, c)
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, got, 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "no golden result for this input: run go test ./engine/ -run TestGoldenResults -update")
			if bytes.Equal(want, got) {
				return
			}
			var w goldenRecord
			if json.Unmarshal(want, &w) == nil && w.Input != inputDigest(t, c) {
				t.Fatalf("the input changed since %s was recorded: check why, then run with -update", file)
			}
			t.Errorf("the result differs from %s (-recorded +now):\n%s", file, cmp.Diff(string(want), string(got)))
		})
	}
	err := filepath.WalkDir(goldenDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || files[p] {
			return err
		}
		if *update {
			return os.Remove(p)
		}
		t.Errorf("%s belongs to no input: run with -update to remove it", p)
		return nil
	})
	if !*update || !os.IsNotExist(err) {
		require.NoError(t, err)
	}
}

// goldenEngines are the embedded policies with data, each with a deadline a minute long: the
// golden results are the policies' answers, not the machine's speed (the limits worlds of
// 5,000 operands take over the default deadline on a busy runner with -race).
var (
	goldenEnginesMu sync.Mutex
	goldenEngines   = map[string]*engine.Engine{}
)

func goldenEngine(t *testing.T, data map[string]any) *engine.Engine {
	t.Helper()
	goldenEnginesMu.Lock()
	defer goldenEnginesMu.Unlock()
	key := fmt.Sprint(data)
	if e, ok := goldenEngines[key]; ok {
		return e
	}
	e, err := engine.New(context.Background(), engine.Options{Data: data, Timeout: time.Minute})
	require.NoError(t, err)
	goldenEngines[key] = e
	return e
}

// goldenJSON evaluates c and writes the record as indented JSON.
func goldenJSON(t *testing.T, c goldenCase) []byte {
	t.Helper()
	e := goldenEngine(t, c.data)
	r := e.Evaluate(context.Background(), c.doc)
	rec := goldenRecord{Input: inputDigest(t, c), Result: r}
	if r.Err != nil {
		rec.Err = r.Err.Error()
	}
	r.Revision = ""
	for i := range r.Decision.Denials {
		r.Decision.Denials[i].Source = sourceRow.ReplaceAllString(r.Decision.Denials[i].Source, ".rego:N ")
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	require.NoError(t, err)
	b = bytes.ReplaceAll(b, []byte(e.Revision()), []byte("<revision>"))
	return append(b, '\n')
}

var sourceRow = regexp.MustCompile(`\.rego:\d+ `)

func inputDigest(t *testing.T, c goldenCase) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"data": c.data, "input": c.doc})
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	var cases []goldenCase
	cases = append(cases, scenarioCases(t)...)
	cases = append(cases, worldCases(t)...)
	cases = append(cases, regoCases(t)...)
	cases = append(cases, snapshotCases(t)...)
	return cases
}

// caseName makes a name a path segment: lowercase words joined by "-".
func caseName(s string) string {
	s = strings.ToLower(s)
	s = regexp.MustCompile(`[^a-z0-9.=]+`).ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

// recorder is an approval.Evaluator that keeps every distinct document it evaluates, as JSON.
type recorder struct {
	e    approval.Evaluator
	docs [][]byte
	seen map[string]bool
}

func (r *recorder) Evaluate(ctx context.Context, in map[string]any) *engine.Result {
	if b, err := json.Marshal(in); err == nil && !r.seen[string(b)] {
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[string(b)] = true
		r.docs = append(r.docs, b)
	}
	return r.e.Evaluate(ctx, in)
}

func decodeDoc(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc))
	return doc
}

// worldDocs gathers w as the scenarios do, and returns its document and every other document
// the gathering evaluated. The gathering evaluates with the golden engine's deadline: which
// document a decision returns depends on what it decided (a denied move's document replaces
// the Subscription's), so a deadline missed on a busy machine would change the input.
func worldDocs(t *testing.T, w *world, clock time.Time) (map[string]any, []map[string]any) {
	t.Helper()
	snap := snapshot.New()
	for _, o := range w.objects() {
		require.NoError(t, snap.Add(o))
	}
	rec := &recorder{e: goldenEngine(t, nil)}
	d := &approval.Decider{Reader: snap, Policies: rec, Now: func() time.Time { return clock }}
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: ns, Name: "etcd"})
	require.NoError(t, err)
	require.NotNil(t, dec)
	main, err := json.Marshal(dec.Doc)
	require.NoError(t, err)
	var others []map[string]any
	for _, b := range rec.docs {
		if !bytes.Equal(b, main) {
			others = append(others, decodeDoc(t, b))
		}
	}
	return dec.Doc, others
}

func scenarioCases(t *testing.T) []goldenCase {
	t.Helper()
	tables := []struct {
		name      string
		scenarios []scenario
	}{
		{"hco-condition-matrix", hcoConditionMatrixScenarios()},
		{"health-aggregation", healthAggregationScenarios()},
		{"operator-conditions", operatorConditionScenarios()},
		{"subscription-conditions", subscriptionConditionScenarios()},
		{"bundled-install-plans", bundledInstallPlanScenarios()},
		{"decision", decisionScenarios()},
	}
	var cases []goldenCase
	for _, table := range tables {
		for _, sc := range table.scenarios {
			build := sc.world
			if build == nil {
				build = upgradeWaiting
			}
			w := build()
			if sc.mutate != nil {
				sc.mutate(w)
			}
			doc, others := worldDocs(t, w, now)
			if sc.doc != nil {
				sc.doc(doc)
			}
			name := "scenario/" + table.name + "/" + caseName(sc.name)
			cases = append(cases, goldenCase{name: name, data: sc.data, doc: doc})
			for i, o := range others {
				cases = append(cases, goldenCase{name: fmt.Sprintf("%s/also-%d", name, i+1), doc: o})
			}
		}
	}
	return cases
}

func worldCases(t *testing.T) []goldenCase {
	t.Helper()
	cases := []goldenCase{
		{name: "world/bench-10-operands", doc: benchInput(t)},
		{name: "world/bench-50-operands", doc: benchInput50(t)},
		{name: "world/bench-held", doc: heldInput(t)},
		{name: "world/bench-extension", doc: extensionInput(t)},
	}
	progressing := func(w *world) { w.health("True", "True", "False") }
	worlds := []struct {
		name   string
		mutate []func(w *world)
	}{
		{"recheck-override-until-it-expires", []func(w *world){progressing, waive("OperatorProgressing", now.Add(3*time.Hour))}},
		{"recheck-override-without-expiry", []func(w *world){progressing, waive("OperatorProgressing", time.Time{})}},
		{"recheck-override-expired", []func(w *world){progressing, waive("OperatorProgressing", now.Add(-time.Hour))}},
		{"recheck-override-waives-nothing", []func(w *world){waive("OperatorDegraded", now.Add(3*time.Hour))}},
		{"override-not-overridable", []func(w *world){func(w *world) {
			w.plan.Spec.ClusterServiceVersionNames = []string{"etcd.v2", "stray.v1"}
		}, waive("InstallPlanIncludesBlockedOperator", time.Time{}), waive("PolicyError", time.Time{})}},
		{"limits-operands-healthy", []func(w *world){operandsTimes(thousands, nil)}},
		{"limits-operands-last-degraded", []func(w *world){operandsTimes(thousands, func(i int) bool { return i == thousands-1 })}},
		{"limits-operands-all-degraded", []func(w *world){operandsTimes(thousands, func(int) bool { return true })}},
	}
	fine := map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}
	bad := map[string]string{"Available": "False", "Progressing": "True", "Degraded": "True"}
	for _, c := range []struct {
		name        string
		first, then map[string]string
	}{{"limits-conditions-healthy-first", fine, bad}, {"limits-conditions-bad-first", bad, fine}} {
		worlds = append(worlds, struct {
			name   string
			mutate []func(w *world)
		}{c.name, []func(w *world){func(w *world) {
			_ = unstructured.SetNestedSlice(w.operands[0].Object, conditions(10000, c.first, c.then), "status", "conditions")
		}}})
	}
	for _, first := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse} {
		worlds = append(worlds, struct {
			name   string
			mutate []func(w *world)
		}{"limits-upgradeable-" + strings.ToLower(string(first)) + "-first", []func(w *world){func(w *world) {
			conds := make([]metav1.Condition, 0, 10000)
			for i := range 10000 {
				status := metav1.ConditionTrue
				if (i == 0) == (first == metav1.ConditionFalse) {
					status = metav1.ConditionFalse
				}
				conds = append(conds, metav1.Condition{Type: "Upgradeable", Status: status, Reason: fmt.Sprintf("R%d", i),
					Message: fmt.Sprintf("condition %d", i), ObservedGeneration: 1, LastTransitionTime: earlier})
			}
			w.opCond = operatorCondition("etcd.v1", conds...)
		}}})
	}
	for _, wc := range worlds {
		w := upgradeWaiting()
		for _, m := range wc.mutate {
			m(w)
		}
		doc, _ := worldDocs(t, w, now)
		cases = append(cases, goldenCase{name: "world/" + wc.name, doc: doc})
	}
	return cases
}

// operandsTimes replaces the operands with n healthy ones, those for which degraded holds
// reporting Degraded=True.
func operandsTimes(n int, degraded func(int) bool) func(w *world) {
	return func(w *world) {
		w.operands = nil
		for i := range n {
			if degraded != nil && degraded(i) {
				w.operands = append(w.operands, etcdCluster(fmt.Sprintf("cluster-%05d", i), cond("Available", "True", "InstallSucceeded", earliest),
					cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "True", "HealFailed", earlier)))
				continue
			}
			w.operands = append(w.operands, healthy(fmt.Sprintf("cluster-%05d", i)))
		}
	}
}

// regoCases are the distinct input documents of the Rego tests, found in a trace of each.
func regoCases(t *testing.T) []goldenCase {
	t.Helper()
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		src, err := fs.ReadFile(policies.FS, p)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(p, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		modules[p] = m
		return err
	})
	require.NoError(t, err)
	ch, err := tester.NewRunner().EnableTracing(true).CapturePrintOutput(false).SetParallel(1).SetModules(modules).RunTests(context.Background(), nil)
	require.NoError(t, err)
	// Each test's distinct inputs, in the order its trace meets them; the tests in name order,
	// so that an input several tests share is named after the first.
	type test struct {
		name string
		docs [][]byte
	}
	var tests []test
	for res := range ch {
		require.NoError(t, res.Error, "rego test %s.%s", res.Package, res.Name)
		pkg := strings.TrimPrefix(strings.TrimPrefix(res.Package, "data."), "tollgate.")
		tt := test{name: "rego/" + pkg + "/" + caseName(strings.TrimPrefix(res.Name, "test_"))}
		var values []ast.Value
		terms := map[*ast.Term]bool{}
		for _, ev := range res.Trace {
			in := ev.Input()
			if in == nil || terms[in] {
				continue
			}
			terms[in] = true
			if _, ok := in.Value.(ast.Object); ok && !slices.ContainsFunc(values, func(v ast.Value) bool { return v.Compare(in.Value) == 0 }) {
				values = append(values, in.Value)
			}
		}
		res.Trace = nil
		for _, v := range values {
			x, err := ast.JSON(v)
			require.NoError(t, err)
			b, err := json.Marshal(x)
			require.NoError(t, err)
			tt.docs = append(tt.docs, b)
		}
		tests = append(tests, tt)
	}
	slices.SortFunc(tests, func(a, b test) int { return strings.Compare(a.name, b.name) })
	type found struct {
		name string
		doc  map[string]any
	}
	var all []found
	seen := map[string]bool{}
	for _, tt := range tests {
		for _, b := range tt.docs {
			if !seen[string(b)] {
				seen[string(b)] = true
				all = append(all, found{tt.name, decodeDoc(t, b)})
			}
		}
	}
	count := map[string]int{}
	var cases []goldenCase
	for _, f := range all {
		count[f.name]++
		cases = append(cases, goldenCase{name: f.name + "/" + strconv.Itoa(count[f.name]), doc: f.doc})
	}
	return cases
}

// snapshotCases are the documents Tollgate evaluates on each snapshot file and fuzz seed.
func snapshotCases(t *testing.T) []goldenCase {
	t.Helper()
	type source struct{ name, file string }
	var sources []source
	root := repo.Path("test", "testdata")
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		sources = append(sources, source{strings.TrimSuffix(filepath.ToSlash(rel), ".yaml"), p})
		return nil
	}))
	for _, corpus := range []string{"internal/decide/input/testdata/fuzz/FuzzBuild", "internal/report/snapshot/testdata/fuzz/FuzzLoad", "internal/decide/approval/testdata/fuzz/FuzzNoApprovalWhileNotUpgradeable"} {
		entries, err := os.ReadDir(repo.Path(corpus))
		require.NoError(t, err)
		for _, e := range entries {
			b, err := os.ReadFile(repo.Path(corpus, e.Name()))
			require.NoError(t, err)
			lines := strings.SplitN(string(b), "\n", 3)
			require.GreaterOrEqual(t, len(lines), 2, "%s/%s", corpus, e.Name())
			text, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
			require.NoError(t, err, "%s/%s", corpus, e.Name())
			file := filepath.Join(t.TempDir(), "snapshot.yaml")
			require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
			sources = append(sources, source{"fuzz/" + filepath.Base(corpus) + "/" + e.Name(), file})
		}
	}
	var cases []goldenCase
	for _, src := range sources {
		docs := snapshotDocs(t, src.file)
		count := map[string]int{}
		for _, b := range docs {
			doc := decodeDoc(t, b)
			key := "unknown"
			if sub, ok := doc["subscription"].(map[string]any); ok {
				md, _ := sub["metadata"].(map[string]any)
				key = fmt.Sprintf("%v.%v", md["namespace"], md["name"])
			}
			count[key]++
			cases = append(cases, goldenCase{name: fmt.Sprintf("snapshot/%s/%s/%d", src.name, caseName(key), count[key]), doc: doc})
		}
	}
	return cases
}

// snapshotDocs loads file as `tollgate eval` does, decides every Subscription and judges every
// InstallPlan, and returns every distinct document evaluated; none when it does not load.
func snapshotDocs(t *testing.T, file string) [][]byte {
	t.Helper()
	ctx := context.Background()
	snap, err := snapshot.Load(file)
	if err != nil {
		return nil
	}
	var subs v1alpha1.SubscriptionList
	require.NoError(t, snap.List(ctx, &subs))
	slices.SortFunc(subs.Items, func(a, b v1alpha1.Subscription) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for i := range subs.Items {
		err := snap.Get(ctx, client.ObjectKeyFromObject(&subs.Items[i]), &tollgatev1alpha1.UpgradeGate{})
		require.NoError(t, client.IgnoreNotFound(err))
		if err != nil {
			require.NoError(t, snap.Add(gatestatus.New(&subs.Items[i])))
		}
	}
	rec := &recorder{e: embedded(t, nil)}
	d := &approval.Decider{Reader: snap, Policies: rec, Now: func() time.Time { return goldenNow }}
	for i := range subs.Items {
		_, err := d.Decide(ctx, client.ObjectKeyFromObject(&subs.Items[i]))
		require.NoError(t, err)
	}
	var plans v1alpha1.InstallPlanList
	require.NoError(t, snap.List(ctx, &plans))
	slices.SortFunc(plans.Items, func(a, b v1alpha1.InstallPlan) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for i := range plans.Items {
		_, err := d.Judge(ctx, &plans.Items[i])
		require.NoError(t, err)
	}
	return rec.docs
}
