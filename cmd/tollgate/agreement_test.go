package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/report/evaluation"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// The agreement test: the manager on a real API server and `tollgate eval` on the same
// objects must reach the same plan verdicts and write the same gate status, because they
// share one decision path (approval.Decider and gatestatus.Next). Each fixture gets its own
// control plane and manager.

const agreementPolicyNS = "tollgate-system"

var (
	scenarioSnapshots = repo.Path("test", "testdata", "snapshots")
	agreementFixtures = repo.Path("test", "testdata", "agreement")
	// decoyFixtures hold plans that must stay held: decoy Subscriptions, a second
	// OperatorGroup, an operand in another version, a recreated Subscription.
	decoyFixtures = repo.Path("test", "testdata", "decoys")
	// realOLMFixtures are states real OLM wrote (make olm-fixtures).
	realOLMFixtures = repo.Path("test", "testdata", "olm")
)

// agreementCase is one fixture: the files holding its objects, and what it must show
// beyond agreement.
type agreementCase struct {
	name  string
	paths []string
	check func(t *testing.T, s *settledCluster, fixtureEval *evaluation.Report)
}

// settledCluster is a fixture's objects on a control plane, after the manager has settled.
type settledCluster struct {
	fixture    string
	env        *controlplane.Env
	kubeconfig string
	objects    []*unstructured.Unstructured // as the fixture files hold them
}

func TestAgreementOfManagerAndEval(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
	for _, c := range agreementCases(t) {
		t.Run(c.name, func(t *testing.T) {
			s := settle(t, c.name, c.paths)
			fixtureEval := evalOf(t, c.paths...)
			assertPlanVerdictsAgree(t, s, fixtureEval)
			assertGateStatusesAgree(t, s)
			if c.check != nil {
				c.check(t, s, fixtureEval)
			}
		})
	}
}

// agreementCases are the scenario snapshots (not the malformed folder) and the fixtures of
// this test.
func agreementCases(t *testing.T) []agreementCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(scenarioSnapshots, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no scenario snapshot in %s", scenarioSnapshots)
	var cases []agreementCase
	for _, f := range files {
		cases = append(cases, agreementCase{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), paths: []string{f}})
	}
	decoys, err := filepath.Glob(filepath.Join(decoyFixtures, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, decoys, "no fixture in %s", decoyFixtures)
	for _, f := range decoys {
		cases = append(cases, agreementCase{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), paths: []string{f}, check: assertEveryPlanHeld})
	}
	real, err := filepath.Glob(filepath.Join(realOLMFixtures, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, real, "no fixture in %s: run make olm-fixtures", realOLMFixtures)
	for _, f := range real {
		c := agreementCase{name: "olm-" + strings.TrimSuffix(filepath.Base(f), ".yaml"), paths: []string{f}}
		if strings.HasSuffix(f, "-held.yaml") {
			c.check = assertEveryPlanHeld
		}
		cases = append(cases, c)
	}
	policy := filepath.Join(t.TempDir(), "policy-configmap.yaml")
	require.NoError(t, os.WriteFile(policy, notAllowedWithoutDenialPolicy(t, "prometheus"), 0o644))
	return append(cases, agreementCase{
		name:  "bundled-allowed-without-denial",
		paths: []string{filepath.Join(agreementFixtures, "bundled-allowed-without-denial.yaml"), policy},
		check: assertBundledPlanHeldWithoutDenial,
	})
}

// assertEveryPlanHeld checks that eval holds every plan of the fixture, and that none the
// fixture holds unapproved (a real cluster's also holds the plans of earlier installs,
// approved) is approved on the API server.
func assertEveryPlanHeld(t *testing.T, s *settledCluster, fixtureEval *evaluation.Report) {
	t.Helper()
	for _, v := range fixtureEval.InstallPlans {
		assert.False(t, v.Approvable, "%s: eval approves InstallPlan %s/%s", s.fixture, v.Namespace, v.Name)
	}
	approvedBefore := map[types.NamespacedName]bool{}
	for _, obj := range s.objects {
		if approved, _, _ := unstructured.NestedBool(obj.Object, "spec", "approved"); obj.GetKind() == "InstallPlan" && approved {
			approvedBefore[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}] = true
		}
	}
	var plans v1alpha1.InstallPlanList
	require.NoError(t, s.env.Client.List(context.Background(), &plans))
	require.Greater(t, len(plans.Items), len(approvedBefore), "%s holds a plan waiting for approval", s.fixture)
	for _, p := range plans.Items {
		if !approvedBefore[client.ObjectKeyFromObject(&p)] {
			assert.False(t, p.Spec.Approved, "%s: the manager approved InstallPlan %s/%s", s.fixture, p.Namespace, p.Name)
		}
	}
}

// notAllowedWithoutDenialPolicy is an admin policy ConfigMap whose main.rego replaces the
// embedded one, with the rule that sets allowed also false for the Subscription named sub:
// its decision is allowed: false without any denial.
func notAllowedWithoutDenialPolicy(t *testing.T, sub string) []byte {
	t.Helper()
	src, err := os.ReadFile(repo.Path("policies", "main", "main.rego"))
	require.NoError(t, err)
	const rule = "allowed if count(standing) == 0\n"
	require.Equal(t, 1, strings.Count(string(src), rule),
		"policies/main/main.rego no longer holds the rule %q exactly once: update this test's admin policy to the new rule", strings.TrimSpace(rule))
	replaced := strings.Replace(string(src), rule, fmt.Sprintf("allowed if {\n\tcount(standing) == 0\n\tinput.subscription.metadata.name != %q\n}\n", sub), 1)
	cm := corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: agreementPolicyNS, Name: "not-allowed-without-denial",
			Labels: map[string]string{policysource.Label: policysource.KindRego}},
		Data: map[string]string{"main.rego": replaced},
	}
	b, err := yaml.Marshal(cm)
	require.NoError(t, err)
	return b
}

// settle creates the fixture's objects on a fresh control plane, runs the manager on them
// and waits until it has decided every Subscription and stopped changing anything.
func settle(t *testing.T, fixture string, paths []string) *settledCluster {
	t.Helper()
	objs := loadObjects(t, paths...)
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	createNamespaces(t, ctx, env.Client, objs)
	serveOperandKinds(t, ctx, env.Client, objs)
	for _, obj := range objs {
		createObject(t, ctx, env.Client, obj)
	}
	startManager(t, env)
	waitSettled(t, ctx, env.Client)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, env.Kubeconfig(kubeconfig))
	return &settledCluster{fixture: fixture, env: env, kubeconfig: kubeconfig, objects: objs}
}

// loadObjects reads every object of the YAML files.
func loadObjects(t *testing.T, paths ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var m map[string]any
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "decode %s", p)
			if len(m) > 0 {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
		require.NoError(t, f.Close())
	}
	require.NotEmpty(t, out, "no object in %v", paths)
	return out
}

func createNamespaces(t *testing.T, ctx context.Context, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	names := []string{agreementPolicyNS}
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" {
			names = append(names, ns)
		}
	}
	slices.Sort(names)
	for _, ns := range slices.Compact(names) {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
}

// serveOperandKinds installs a CRD for each kind of the fixture the control plane does not
// serve (the operands' kinds, such as EtcdCluster), and waits until it is served.
func serveOperandKinds(t *testing.T, ctx context.Context, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	var kinds []schema.GroupVersionKind
	for _, obj := range objs {
		if gvk := obj.GroupVersionKind(); !c.Scheme().Recognizes(gvk) && !slices.Contains(kinds, gvk) {
			kinds = append(kinds, gvk)
		}
	}
	for _, gvk := range kinds {
		require.NoError(t, c.Create(ctx, operandCRD(gvk)), "create a CRD for %s", gvk)
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		require.Eventually(t, func() bool { return c.List(ctx, list) == nil }, 30*time.Second, 100*time.Millisecond,
			"the CRD of %s is not served", gvk)
	}
}

// operandCRD is a namespaced CRD for gvk that keeps any field and has a status subresource.
func operandCRD(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	singular := strings.ToLower(gvk.Kind)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": singular + "s." + gvk.Group},
		"spec": map[string]any{
			"group": gvk.Group,
			"scope": "Namespaced",
			"names": map[string]any{"kind": gvk.Kind, "listKind": gvk.Kind + "List", "plural": singular + "s", "singular": singular},
			"versions": []any{map[string]any{
				"name": gvk.Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

// createObject creates obj with its status. An object the CRD's validation rules refuse
// (the invalid CatalogSource) is stored as under a CRD without them, as on a cluster whose
// CRDs were upgraded after the object was written: that is when Tollgate's policies see it.
func createObject(t *testing.T, ctx context.Context, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	err := createWithStatus(ctx, c, obj)
	if !apierrors.IsInvalid(err) {
		require.NoError(t, err)
		return
	}
	t.Logf("the API server refuses %s/%s %s (%v); storing it with the CRD's validation rules lifted", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	crd := crdOf(t, c, obj.GroupVersionKind())
	orig := crd.DeepCopy()
	stripValidationRules(crd.Object["spec"])
	require.NoError(t, c.Update(ctx, crd))
	require.Eventually(t, func() bool { return createWithStatus(ctx, c, obj) == nil }, 30*time.Second, 200*time.Millisecond,
		"%s %s/%s is refused even without the CRD's validation rules", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(crd), crd))
	crd.Object["spec"] = orig.Object["spec"]
	require.NoError(t, c.Update(ctx, crd))
	probe := obj.DeepCopy()
	probe.SetName(obj.GetName() + "-probe")
	require.Eventually(t, func() bool {
		return apierrors.IsInvalid(c.Create(ctx, stripped(probe), client.DryRunAll))
	}, 30*time.Second, 200*time.Millisecond, "the validation rules of %s are not back in force", crd.GetName())
}

// createWithStatus creates obj, then writes its status through the status subresource
// (which ignores status on create).
func createWithStatus(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	obj = stripped(obj)
	status, hasStatus := obj.Object["status"]
	delete(obj.Object, "status")
	what := fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("create %s: %w", what, err)
	}
	if !hasStatus {
		return nil
	}
	obj.Object["status"] = status
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("write the status of %s: %w", what, err)
	}
	return nil
}

// stripped is a copy of obj without what the API server sets itself.
func stripped(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	for _, field := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
	}
	return obj
}

// crdOf is the CustomResourceDefinition that serves gvk.
func crdOf(t *testing.T, c client.Client, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	t.Helper()
	mapping, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	require.NoError(t, err)
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Name: mapping.Resource.Resource + "." + gvk.Group}, crd))
	return crd
}

// stripValidationRules removes every x-kubernetes-validations from a CRD spec, in place.
func stripValidationRules(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "x-kubernetes-validations")
		for _, e := range v {
			stripValidationRules(e)
		}
	case []any:
		for _, e := range v {
			stripValidationRules(e)
		}
	}
}

// startManager runs the manager in-process until the end of the test.
func startManager(t *testing.T, env *controlplane.Env) {
	t.Helper()
	// The manager's log is shown when the fixture fails: what it decided, wrote and deferred.
	var log lockedBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the manager's log:\n%s", log.String())
		}
	})
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Logger:  zap.New(zap.WriteTo(&log), zap.UseDevMode(true)),
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(agreementPolicyNS),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// One manager per fixture in this one process: controller names would clash.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: agreementPolicyNS})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "the manager stopped with an error")
	})
}

// lockedBuffer is a buffer the manager's goroutines write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitSettled waits until every Subscription has a gate with a decision, and the gates'
// statuses and the plans' approvals have not changed for a while.
func waitSettled(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	const quiet, limit = 2 * time.Second, time.Minute
	deadline := time.Now().Add(limit)
	var last string
	var since time.Time
	for {
		state, undecided, err := managerState(ctx, c)
		require.NoError(t, err)
		if state != last || len(undecided) > 0 {
			last, since = state, time.Now()
		}
		if len(undecided) == 0 && time.Since(since) >= quiet {
			return
		}
		if time.Now().After(deadline) {
			why := "the gates' statuses or the plans' approvals kept changing"
			if len(undecided) > 0 {
				why = "no gate with status.decision.evaluatedAt for " + strings.Join(undecided, ", ")
			}
			t.Fatalf("the manager did not settle within %s: %s; last state seen:\n%s", limit, why, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// managerState is what the manager writes (gate statuses, plan approvals) as a comparable
// string, and the Subscriptions it has not decided yet.
func managerState(ctx context.Context, c client.Client) (string, []string, error) {
	var subs v1alpha1.SubscriptionList
	var gates tollgatev1alpha1.UpgradeGateList
	var plans v1alpha1.InstallPlanList
	for _, list := range []client.ObjectList{&subs, &gates, &plans} {
		if err := c.List(ctx, list); err != nil {
			return "", nil, err
		}
	}
	state := map[string]any{}
	for _, g := range gates.Items {
		state["gate "+g.Namespace+"/"+g.Name] = g.Status
	}
	for _, p := range plans.Items {
		state["plan "+p.Namespace+"/"+p.Name+" approved"] = p.Spec.Approved
	}
	var undecided []string
	for _, s := range subs.Items {
		i := slices.IndexFunc(gates.Items, func(g tollgatev1alpha1.UpgradeGate) bool { return g.Namespace == s.Namespace && g.Name == s.Name })
		if i < 0 || gates.Items[i].Status.Decision.EvaluatedAt == nil {
			undecided = append(undecided, s.Namespace+"/"+s.Name)
		}
	}
	b, err := json.MarshalIndent(state, "", "  ")
	return string(b), undecided, err
}

// evalOf runs `tollgate eval -o json` on the files.
func evalOf(t *testing.T, paths ...string) *evaluation.Report {
	t.Helper()
	args := []string{"eval", "-o", "json"}
	for _, p := range paths {
		args = append(args, "--snapshot", p)
	}
	stdout, stderr, err := run(t, args...)
	require.NoError(t, err, stderr)
	assert.Empty(t, stderr, "eval of %v warns", paths)
	var rep evaluation.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	return &rep
}

// assertPlanVerdictsAgree checks that the manager approved each InstallPlan of the fixture
// exactly when eval, on the fixture itself, says approve: true.
func assertPlanVerdictsAgree(t *testing.T, s *settledCluster, fixtureEval *evaluation.Report) {
	t.Helper()
	plans := 0
	for _, obj := range s.objects {
		if obj.GetKind() != "InstallPlan" {
			continue
		}
		plans++
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		i := slices.IndexFunc(fixtureEval.InstallPlans, func(v approval.Verdict) bool { return v.Namespace == key.Namespace && v.Name == key.Name })
		require.GreaterOrEqual(t, i, 0, "%s: eval judged no InstallPlan %s", s.fixture, key)
		verdict := fixtureEval.InstallPlans[i]
		approvedBefore, _, _ := unstructured.NestedBool(obj.Object, "spec", "approved")
		approvedByManager := !approvedBefore && approved(t, s, key, verdict.Approvable)
		why := verdict.WhyNot()
		if why == "" {
			why = "nothing holds it"
		}
		assert.Equal(t, verdict.Approvable, approvedByManager,
			"%s: InstallPlan %s: eval says approve=%t (%s), the manager approved it: %t",
			s.fixture, key, verdict.Approvable, why, approvedByManager)
	}
	assert.Len(t, fixtureEval.InstallPlans, plans, "%s: eval judges every InstallPlan of the fixture, and only those", s.fixture)
}

// approved says whether the plan is approved on the API server. When eval approves it, a busy
// machine may still be bringing the manager's approval: approved waits up to a minute for it.
func approved(t *testing.T, s *settledCluster, key types.NamespacedName, expect bool) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var plan v1alpha1.InstallPlan
		require.NoError(t, s.env.Client.Get(context.Background(), key, &plan))
		if plan.Spec.Approved || !expect || time.Now().After(deadline) {
			return plan.Spec.Approved
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assertGateStatusesAgree snapshots the settled cluster with the CLI, evaluates the
// snapshot, and compares the status eval would write for each Subscription with the status
// the manager wrote, until they agree or a minute has passed.
func assertGateStatusesAgree(t *testing.T, s *settledCluster) {
	t.Helper()
	const limit = time.Minute
	deadline := time.Now().Add(limit)
	for {
		diffs := gateStatusDiffs(t, s)
		if len(diffs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, d := range diffs {
				t.Error(d)
			}
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// gateStatusDiffs compares each gate the manager wrote with eval's status for a snapshot of
// the cluster taken now, and says where they differ. On a busy machine a status write the
// manager deferred (while OLM is midway) can still be on its way when the cluster looks
// quiet, so the caller asks again until they agree or a minute has passed: a manager that
// never writes what eval says still fails.
func gateStatusDiffs(t *testing.T, s *settledCluster) []string {
	t.Helper()
	stdout, stderr, err := run(t, "snapshot", "--kubeconfig", s.kubeconfig, "-A")
	require.NoError(t, err, stderr)
	path := filepath.Join(t.TempDir(), "settled.yaml")
	require.NoError(t, os.WriteFile(path, []byte(stdout), 0o644))
	rep := evalOf(t, path)

	ctx := context.Background()
	var subs v1alpha1.SubscriptionList
	require.NoError(t, s.env.Client.List(ctx, &subs))
	require.Len(t, rep.Subscriptions, len(subs.Items), "%s: eval of the settled snapshot decides every Subscription", s.fixture)
	var diffs []string
	for _, sub := range rep.Subscriptions {
		var gate tollgatev1alpha1.UpgradeGate
		require.NoError(t, s.env.Client.Get(ctx, types.NamespacedName{Namespace: sub.Namespace, Name: sub.Name}, &gate))
		if diff := cmp.Diff(viewOf(gate.Status), viewOf(sub.Status)); diff != "" {
			diffs = append(diffs, fmt.Sprintf("%s: Subscription %s/%s: the manager's gate status (-) and eval's status (+) differ:\n%s", s.fixture, sub.Namespace, sub.Name, diff))
		}
	}
	return diffs
}

// gateView is the part of a gate status that the manager and eval must agree on: all but
// times, digests, generations and the last approved plan (which only the manager knows).
type gateView struct {
	InstalledCSV, CurrentCSV, State string
	UpToDate                        bool
	Conditions, Health              []conditionView
	Decision                        decisionView
}

type conditionView struct{ Type, Status, Reason, Message string }

type decisionView struct {
	Allowed        bool
	BlockedBy      string
	Denials        []tollgatev1alpha1.Denial
	PolicyRevision string
}

func viewOf(s tollgatev1alpha1.UpgradeGateStatus) gateView {
	conditions := func(in []metav1.Condition) []conditionView {
		out := []conditionView{}
		for _, c := range in {
			out = append(out, conditionView{c.Type, string(c.Status), c.Reason, c.Message})
		}
		return out
	}
	return gateView{
		InstalledCSV: s.InstalledCSV, CurrentCSV: s.CurrentCSV, State: s.State, UpToDate: s.UpToDate,
		Conditions: conditions(s.Conditions), Health: conditions(s.Health),
		Decision: decisionView{Allowed: s.Decision.Allowed, BlockedBy: s.Decision.BlockedBy,
			Denials: s.Decision.Denials, PolicyRevision: s.Decision.PolicyRevision},
	}
}

// assertBundledPlanHeldWithoutDenial: prometheus's policy says allowed: false without a
// denial, so the plan it shares with etcd is held, and both the manager and eval say so.
func assertBundledPlanHeldWithoutDenial(t *testing.T, s *settledCluster, fixtureEval *evaluation.Report) {
	ctx := context.Background()
	plan := types.NamespacedName{Namespace: "team-f", Name: "install-team-f"}
	var ip v1alpha1.InstallPlan
	require.NoError(t, s.env.Client.Get(ctx, plan, &ip))
	assert.False(t, ip.Spec.Approved, "the manager must not approve %s", plan)

	require.Len(t, fixtureEval.InstallPlans, 1)
	verdict := fixtureEval.InstallPlans[0]
	assert.False(t, verdict.Approvable, "eval must not approve %s", plan)
	assert.Empty(t, verdict.Ineligible, "the plan is Tollgate's to approve; it is held, not ineligible")
	assert.Contains(t, verdict.Blockers, approval.Blocker{CSV: "prometheusoperator.v0.70.0", Subscription: "team-f/prometheus", Reason: approval.BlockDenied},
		"prometheus blocks the plan with no code: its policy said allowed: false without a denial")

	var prometheus, etcd tollgatev1alpha1.UpgradeGate
	require.NoError(t, s.env.Client.Get(ctx, types.NamespacedName{Namespace: "team-f", Name: "prometheus"}, &prometheus))
	require.NoError(t, s.env.Client.Get(ctx, types.NamespacedName{Namespace: "team-f", Name: "etcd"}, &etcd))
	assert.False(t, prometheus.Status.Decision.Allowed, "the admin policy says prometheus is not allowed")
	assert.Empty(t, prometheus.Status.Decision.Denials, "and gives no denial")
	assert.False(t, etcd.Status.Decision.Allowed, "etcd's plan companion is not allowed")
	assert.Equal(t, "InstallPlanIncludesBlockedOperator", etcd.Status.Decision.BlockedBy)
}
