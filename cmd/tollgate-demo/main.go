package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/test/controlplane"
)

func init() { extraCommands = append(extraCommands, newDemoCommand) }

// Names of the demo's world.
const (
	demoNS        = "demo"
	demoCatalogNS = "olm"
	demoSub       = "etcd"
	demoOldCSV    = "etcd.v0.9.2"
	demoNewCSV    = "etcd.v0.9.4"
	demoPlan      = "install-etcd-v0-9-4"
	demoTimeout   = 30 * time.Second
)

func newDemoCommand() *cobra.Command {
	var keep, verbose bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch Tollgate hold an upgrade, explain why, and approve it when the operator is ready",
		Long: `Start a local control plane (kube-apiserver and etcd, built by 'make controlplane'), install
the OLM and Tollgate CRDs, run the Tollgate manager in this process, and play a story: an
installed operator reports Upgradeable=False while it migrates storage; a new version arrives
and OLM (played by the demo) creates an InstallPlan waiting for approval; Tollgate holds it and
explains why; the operator reports Upgradeable=True and Tollgate approves the plan.

Takes a few seconds once the binaries exist, leaves nothing running and removes its temporary
files. With --keep the control plane and the manager stay up, and the demo prints a kubeconfig
to explore them with kubectl, until Ctrl-C.`,
		Example: `  # the whole story, then clean up (what 'make demo' runs)
  tollgate demo

  # keep the cluster to look around with kubectl; Ctrl-C ends it
  tollgate demo --keep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), keep, verbose)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "leave the control plane and the manager running and print a kubeconfig, until Ctrl-C")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "show the manager's log on stderr")
	return cmd
}

// narrator prints numbered steps and how long the story has been running.
type narrator struct {
	w     io.Writer
	n     int
	start time.Time
}

func (n *narrator) step(format string, args ...any) {
	n.n++
	fmt.Fprintf(n.w, "\n== Step %d: %s  [%.1fs]\n", n.n, fmt.Sprintf(format, args...), time.Since(n.start).Seconds())
}

func (n *narrator) say(format string, args ...any) {
	fmt.Fprintf(n.w, "   "+format+"\n", args...)
}

func runDemo(ctx context.Context, out, errOut io.Writer, keep, verbose bool) (err error) {
	n := &narrator{w: out, start: time.Now()}
	if err := ensureControlPlane(ctx, errOut); err != nil {
		return err
	}

	n.step("Start a local control plane")
	env, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		return fmt.Errorf("%w (rebuild the binaries with `make controlplane`)", err)
	}
	defer func() {
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop the control plane: %w", stopErr)
		}
	}()
	n.say("kube-apiserver at %s, with the OLM and Tollgate CRDs installed", env.Config.Host)

	n.step("Start the Tollgate manager (in this process)")
	if verbose {
		ctrl.SetLogger(zap.New(zap.WriteTo(errOut)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	mf := managerFlags{defaultMode: string(tollgatev1alpha1.ModeEnforce), globalCatalogNS: demoCatalogNS,
		policyNamespace: "tollgate-system", evalTimeout: engine.DefaultTimeout, reevaluate: time.Minute}
	opts, err := mf.options()
	if err != nil {
		return err
	}
	mgrCtx, stopManager := context.WithCancel(ctx)
	managerDone := make(chan error, 1)
	go func() {
		managerDone <- runManager(mgrCtx, env.Config, opts, nil, ctrl.Options{
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		})
	}()
	defer func() {
		stopManager()
		if mgrErr := <-managerDone; mgrErr != nil && err == nil {
			err = fmt.Errorf("the manager failed: %w", mgrErr)
		}
	}()
	n.say("gating every Subscription in Enforce mode, with the embedded policies")

	c := env.Client
	d := &demo{c: c, n: n, out: out, managerDone: managerDone}
	if err := d.story(ctx); err != nil {
		return err
	}

	if !keep {
		n.step("Clean up")
		n.say("stopping the manager and the control plane; nothing is left running")
		return nil
	}
	return d.keep(ctx, env)
}

// ensureControlPlane builds the control plane binaries when they are missing, with make's
// progress on w, or says how to.
func ensureControlPlane(ctx context.Context, w io.Writer) error {
	if _, err := controlplane.Assets(); err == nil {
		return nil
	}
	root := controlplane.RepoRoot()
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		return fmt.Errorf("%w; in a Tollgate checkout: make controlplane", controlplane.ErrNoAssets)
	}
	fmt.Fprintf(w, "The control plane binaries are missing: building them with `make controlplane` in %s (about 6 minutes, once).\n", root)
	cmd := exec.CommandContext(ctx, "make", "-C", root, "controlplane") //nolint:gosec // make in the source tree this binary was built from
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make controlplane failed (%w): run it yourself to see why", err)
	}
	_, err := controlplane.Assets()
	return err
}

type demo struct {
	c           client.Client
	n           *narrator
	out         io.Writer
	managerDone <-chan error
}

func (d *demo) story(ctx context.Context) error {
	n, c := d.n, d.c
	key := types.NamespacedName{Namespace: demoNS, Name: demoSub}

	n.step("An admin installs the etcd operator with Manual approval")
	oc, err := d.install(ctx)
	if err != nil {
		return err
	}
	gate, err := d.waitGate(ctx, key, "Tollgate to gate the Subscription", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.EvaluatedAt != nil && g.Status.InstalledCSV == demoOldCSV
	})
	if err != nil {
		return err
	}
	n.say("Tollgate created UpgradeGate %s/%s: %s", demoNS, demoSub, gateLine(gate))

	n.step("A new version arrives: OLM resolves %s and waits for approval", demoNewCSV)
	plan, err := d.offerUpgrade(ctx)
	if err != nil {
		return err
	}
	n.step("Tollgate holds the upgrade")
	gate, err = d.waitGate(ctx, key, "Tollgate to decide on the upgrade", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.CurrentCSV == demoNewCSV && g.Status.Decision.EvaluatedAt != nil
	})
	if err != nil {
		return err
	}
	n.say("UpgradeGate %s/%s: %s", demoNS, demoSub, gateLine(gate))
	if err := c.Get(ctx, client.ObjectKeyFromObject(plan), plan); err != nil {
		return err
	}
	if plan.Spec.Approved {
		return errors.New("the InstallPlan was approved although the operator reports Upgradeable=False: Tollgate is not gating")
	}
	n.say("InstallPlan %s: approved=%v, it waits", demoPlan, plan.Spec.Approved)
	n.say("")
	n.say("What `tollgate explain -n %s %s` says:", demoNS, demoSub)
	if err := d.explain(ctx, key); err != nil {
		return err
	}

	n.step("The operator finishes its migration and reports Upgradeable=True")
	if err := c.Get(ctx, client.ObjectKeyFromObject(oc), oc); err != nil {
		return err
	}
	oc.Spec.Conditions = []metav1.Condition{upgradeable(metav1.ConditionTrue, "MigrationComplete", "storage migrated, safe to upgrade", 0)}
	if err := c.Update(ctx, oc); err != nil {
		return fmt.Errorf("update the OperatorCondition: %w", err)
	}
	reported := time.Now()
	n.say("the operator sets spec.conditions Upgradeable=True, \"storage migrated, safe to upgrade\"")
	oc.Status.Conditions = []metav1.Condition{upgradeable(metav1.ConditionTrue, "MigrationComplete", "storage migrated, safe to upgrade", oc.Generation)}
	if err := c.Status().Update(ctx, oc); err != nil {
		return fmt.Errorf("update the OperatorCondition's status: %w", err)
	}
	n.say("(the demo plays OLM) copies it to status.conditions at generation %d", oc.Generation)

	n.step("Tollgate approves the InstallPlan")
	if err := d.wait(ctx, "Tollgate to approve the InstallPlan", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(plan), plan)
		return err == nil && plan.Spec.Approved, err
	}); err != nil {
		return err
	}
	took := time.Since(reported)
	n.say("InstallPlan %s/%s: approved=%v, %s after the operator reported Upgradeable=True", demoNS, demoPlan, plan.Spec.Approved, took.Round(time.Millisecond))
	gate, err = d.waitGate(ctx, key, "the gate to record the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.LastApprovedInstallPlan == demoPlan
	})
	if err != nil {
		return err
	}
	n.say("UpgradeGate %s/%s: %s, last approved plan %s", demoNS, demoSub, gateLine(gate), gate.Status.Decision.LastApprovedInstallPlan)

	n.step("OLM installs %s", demoNewCSV)
	newCSV := demoCSV(demoNewCSV, "0.9.4")
	newCSV.Spec.Replaces = demoOldCSV
	if err := createWithStatus(ctx, c, newCSV, func() {
		newCSV.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: "InstallSucceeded", Message: "install strategy completed with no errors"}
	}); err != nil {
		return err
	}
	plan.Status.Phase = v1alpha1.InstallPlanPhaseComplete
	if err := c.Status().Update(ctx, plan); err != nil {
		return fmt.Errorf("complete the InstallPlan: %w", err)
	}
	if err := d.updateSubscription(ctx, key, func(s *v1alpha1.Subscription) {
		s.Status.InstalledCSV, s.Status.State = demoNewCSV, "AtLatestKnown"
	}); err != nil {
		return err
	}
	n.say("(the demo plays OLM) %s Succeeded, InstallPlan Complete, Subscription installedCSV %s", demoNewCSV, demoNewCSV)
	gate, err = d.waitGate(ctx, key, "the gate to see the upgrade done", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.InstalledCSV == demoNewCSV && g.Status.UpToDate
	})
	if err != nil {
		return err
	}
	n.say("UpgradeGate %s/%s: %s", demoNS, demoSub, gateLine(gate))
	fmt.Fprintf(d.out, "\nThe upgrade waited while the operator said it was not safe, and went ahead %s after it said it was.\n", took.Round(time.Millisecond))
	return nil
}

// install creates the world before the upgrade: the namespaces, an OperatorGroup, a READY
// CatalogSource, the operand CRD, the installed CSV and its operand, an OperatorCondition
// saying Upgradeable=False, and a Manual Subscription at the installed version.
func (d *demo) install(ctx context.Context) (*operatorsv2.OperatorCondition, error) {
	n, c := d.n, d.c
	for _, ns := range []string{demoNS, demoCatalogNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	n.say("namespaces %s and %s", demoNS, demoCatalogNS)
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: demoNS, Name: demoNS},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{demoNS}}}
	if err := createWithStatus(ctx, c, og, func() {
		og.Status = operatorsv1.OperatorGroupStatus{Namespaces: []string{demoNS}, LastUpdated: ptr.To(metav1.Now())}
	}); err != nil {
		return nil, err
	}
	n.say("OperatorGroup %s/%s targeting %s", demoNS, demoNS, demoNS)
	cat := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: demoCatalogNS, Name: "operatorhubio"},
		Spec: v1alpha1.CatalogSourceSpec{DisplayName: "Community Operators", CatalogImageSource: &v1alpha1.CatalogImageSource{CatalogImage: "quay.io/operatorhubio/catalog:latest"}}}
	if err := createWithStatus(ctx, c, cat, func() {
		cat.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{Address: "operatorhubio.olm.svc:50051", LastObservedState: "READY", LastConnectTime: metav1.Now()}
	}); err != nil {
		return nil, err
	}
	n.say("CatalogSource %s/operatorhubio, connection READY", demoCatalogNS)
	if err := d.operandKind(ctx); err != nil {
		return nil, err
	}
	csv := demoCSV(demoOldCSV, "0.9.2")
	if err := createWithStatus(ctx, c, csv, func() {
		csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: "InstallSucceeded", Message: "install strategy completed with no errors"}
	}); err != nil {
		return nil, err
	}
	n.say("ClusterServiceVersion %s, phase Succeeded, owning the EtcdCluster kind", demoOldCSV)
	operand := demoOperand()
	if err := c.Create(ctx, operand); err != nil {
		return nil, fmt.Errorf("create the operand: %w", err)
	}
	n.say("its operand EtcdCluster %s/example: Available, not Progressing, not Degraded", demoNS)
	oc := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: demoNS, Name: demoOldCSV}}
	oc.Spec.Conditions = []metav1.Condition{upgradeable(metav1.ConditionFalse, "Migrating", "migrating storage", 1)}
	if err := createWithStatus(ctx, c, oc, func() { oc.Status.Conditions = oc.Spec.Conditions }); err != nil {
		return nil, err
	}
	n.say("the operator reports in OperatorCondition %s: Upgradeable=False, \"migrating storage\"", demoOldCSV)
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: demoNS, Name: demoSub},
		Spec: &v1alpha1.SubscriptionSpec{Package: "etcd", Channel: "stable", CatalogSource: "operatorhubio", CatalogSourceNamespace: demoCatalogNS, InstallPlanApproval: v1alpha1.ApprovalManual}}
	if err := createWithStatus(ctx, c, sub, func() {
		sub.Status = v1alpha1.SubscriptionStatus{InstalledCSV: demoOldCSV, CurrentCSV: demoOldCSV, State: "AtLatestKnown", LastUpdated: metav1.Now()}
	}); err != nil {
		return nil, err
	}
	n.say("Subscription %s/%s: package etcd, channel stable, installPlanApproval Manual, at %s", demoNS, demoSub, demoOldCSV)
	return oc, nil
}

// offerUpgrade plays OLM resolving a new version: an InstallPlan waiting for approval, and the
// Subscription's status pointing at it.
func (d *demo) offerUpgrade(ctx context.Context) (*v1alpha1.InstallPlan, error) {
	n, c := d.n, d.c
	key := types.NamespacedName{Namespace: demoNS, Name: demoSub}
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: demoNS, Name: demoPlan},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{demoNewCSV}, Approval: v1alpha1.ApprovalManual, CatalogSource: "operatorhubio", CatalogSourceNamespace: demoCatalogNS}}
	if err := createWithStatus(ctx, c, plan, func() {
		plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{"operatorhubio"}}
	}); err != nil {
		return nil, err
	}
	n.say("(the demo plays OLM) InstallPlan %s/%s for %s: approval Manual, phase RequiresApproval", demoNS, demoPlan, demoNewCSV)
	if err := d.updateSubscription(ctx, key, func(s *v1alpha1.Subscription) {
		s.Status.CurrentCSV, s.Status.State = demoNewCSV, "UpgradePending"
		s.Status.InstallPlanRef = &corev1.ObjectReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan", Namespace: demoNS, Name: demoPlan}
	}); err != nil {
		return nil, err
	}
	n.say("Subscription status: currentCSV %s, state UpgradePending", demoNewCSV)
	return plan, nil
}

// explain prints the same explanation `tollgate explain` prints, from the live API server.
func (d *demo) explain(ctx context.Context, key types.NamespacedName) error {
	eng, err := (&policyFlags{namespace: "tollgate-system"}).engine(ctx, d.c, d.out)
	if err != nil {
		return err
	}
	cfg := gather.Config{GlobalCatalogNamespace: demoCatalogNS, DefaultMode: string(tollgatev1alpha1.ModeEnforce)}
	rep, err := explainSubscription(ctx, d.c, eng, key, cfg, tollgatev1alpha1.ModeEnforce, time.Now(), true)
	if err != nil {
		return err
	}
	return renderExplanation(&indented{w: d.out, prefix: "   | "}, rep)
}

func (d *demo) keep(ctx context.Context, env *controlplane.Env) error {
	dir, err := os.MkdirTemp("", "tollgate-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		return err
	}
	kubectl := controlplane.Kubectl()
	if kubectl == "" {
		kubectl = "kubectl"
	}
	d.n.step("The control plane and the manager stay up (--keep)")
	fmt.Fprintf(d.out, `   Explore it from another terminal:

     export KUBECONFIG=%s
     %s get upgradegates -A
     %s get upgradegate -n %s %s -o yaml
     %s get installplans,subscriptions,operatorconditions -n %s
     %s explain -n %s %s

   Press Ctrl-C to stop it and remove everything.
`, kubeconfig, kubectl, kubectl, demoNS, demoSub, kubectl, demoNS, selfCommand(), demoNS, demoSub)
	select {
	case <-ctx.Done():
	case err := <-d.managerDone:
		return fmt.Errorf("the manager stopped: %w", err)
	}
	fmt.Fprintln(d.out, "\nStopping.")
	return nil
}

// selfCommand is how the user runs this binary again: its path, or `go run` for a binary
// `go run` built in a temporary folder.
func selfCommand() string {
	self := os.Args[0]
	if strings.Contains(self, "go-build") {
		return "go run ./cmd/tollgate"
	}
	return self
}

// operandKind installs the CRD of the operator's operands, EtcdCluster, and waits until it is
// served.
func (d *demo) operandKind(ctx context.Context) error {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "etcdclusters.etcd.database.coreos.com"},
		"spec": map[string]any{
			"group": "etcd.database.coreos.com",
			"names": map[string]any{"kind": "EtcdCluster", "listKind": "EtcdClusterList", "plural": "etcdclusters", "singular": "etcdcluster"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1beta2", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if err := d.c.Create(ctx, crd); err != nil {
		return fmt.Errorf("create the EtcdCluster CRD: %w", err)
	}
	if err := d.wait(ctx, "the EtcdCluster CRD to be established", func() (bool, error) {
		if err := d.c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return err
	}
	d.n.say("CustomResourceDefinition etcdclusters.etcd.database.coreos.com (the operator's operand kind)")
	return nil
}

func (d *demo) updateSubscription(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.Subscription)) error {
	sub := &v1alpha1.Subscription{}
	if err := d.c.Get(ctx, key, sub); err != nil {
		return err
	}
	change(sub)
	sub.Status.LastUpdated = metav1.Now()
	if err := d.c.Status().Update(ctx, sub); err != nil {
		return fmt.Errorf("update the Subscription's status: %w", err)
	}
	return nil
}

func (d *demo) waitGate(ctx context.Context, key types.NamespacedName, what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) (*tollgatev1alpha1.UpgradeGate, error) {
	gate := &tollgatev1alpha1.UpgradeGate{}
	err := d.wait(ctx, what, func() (bool, error) {
		if err := d.c.Get(ctx, key, gate); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(gate), nil
	})
	return gate, err
}

// wait polls cond until it holds, the manager fails, or demoTimeout passes.
func (d *demo) wait(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(demoTimeout)
	for {
		done, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s after %s: run `tollgate demo --verbose` to see the manager's log", what, demoTimeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted while waiting for %s", what)
		case err := <-d.managerDone:
			return fmt.Errorf("the manager stopped while waiting for %s: %w", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// createWithStatus creates obj, then writes the status setStatus sets (status is a
// subresource: a create ignores it).
func createWithStatus(ctx context.Context, c client.Client, obj client.Object, setStatus func()) error {
	kind := fmt.Sprintf("%T", obj)
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("create %s %s: %w", kind, obj.GetName(), err)
	}
	setStatus()
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("set the status of %s %s: %w", kind, obj.GetName(), err)
	}
	return nil
}

func demoCSV(name, version string) *v1alpha1.ClusterServiceVersion {
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: demoNS, Name: name}}
	csv.Spec.DisplayName = "etcd"
	csv.Spec.Version = version
	csv.Spec.InstallStrategy.StrategyName = "deployment"
	csv.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}}
	return csv
}

func demoOperand() *unstructured.Unstructured {
	cond := func(t, status, msg string) any {
		return map[string]any{"type": t, "status": status, "reason": "InstallSucceeded", "message": msg, "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2",
		"kind":       "EtcdCluster",
		"metadata":   map[string]any{"namespace": demoNS, "name": "example"},
		"spec":       map[string]any{"size": int64(3)},
		"status": map[string]any{"conditions": []any{
			cond("Available", "True", "3 members ready"),
			cond("Progressing", "False", "idle"),
			cond("Degraded", "False", "all members healthy"),
		}},
	}}
}

func upgradeable(status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: "Upgradeable", Status: status, Reason: reason, Message: message, ObservedGeneration: generation, LastTransitionTime: metav1.Now()}
}

// gateLine is a gate's status in one line, as `kubectl get upgradegate` shows it.
func gateLine(g *tollgatev1alpha1.UpgradeGate) string {
	s := g.Status
	decision := "allowed"
	if !s.Decision.Allowed {
		decision = "held by " + orDefault(s.Decision.BlockedBy, "a denial")
	}
	return fmt.Sprintf("installed %s, current %s, state %s, %s", s.InstalledCSV, s.CurrentCSV, orDefault(s.State, "-"), decision)
}

// indented prefixes every line written through it.
type indented struct {
	w       io.Writer
	prefix  string
	midLine bool
}

func (p *indented) Write(b []byte) (int, error) {
	var buf []byte
	for _, c := range b {
		if !p.midLine {
			buf = append(buf, p.prefix...)
		}
		buf = append(buf, c)
		p.midLine = c != '\n'
	}
	if _, err := p.w.Write(buf); err != nil {
		return 0, err
	}
	return len(b), nil
}
