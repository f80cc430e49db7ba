package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// lockCase is one write to an object and what the gate lock must do with it.
type lockCase struct {
	name string
	as   user
	// object is the object before the write, as OLM or Tollgate left it; the admin creates it
	// under a name of the case's own, unless create is set.
	object func(ns, name string) *unstructured.Unstructured
	// create has the user create object instead of writing to it.
	create bool
	// subresource is the subresource the patch goes to ("" for the object).
	subresource string
	// patch is a JSON merge patch, as kubectl patch --type merge sends.
	patch string
	// refused are phrases of the refusal, each with %[1]s the namespace and %[2]s the object's
	// name; none when the write is admitted.
	refused []string
	// audit is the break-glass audit annotation the admitted write must leave, with %[1]s and
	// %[2]s as in refused; "" for none.
	audit string
}

// runLockCases plays each case on an object of its own in namespace ns (none for a
// cluster-scoped resource), as a subtest, and checks what the policy did.
func runLockCases(t *testing.T, r schema.GroupVersionResource, ns, policy string, cases []lockCase) {
	ctx := t.Context()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("%s-%d", strings.TrimSuffix(r.Resource, "s"), i)
			if ns == "" {
				name = "gate-lock-" + name
			}
			obj := tc.object(ns, name)
			if !tc.create {
				require.NoError(t, upstream.Client.Create(ctx, obj), "create the %s before the write", r.Resource)
			}
			c, err := tc.as.resource(upstream, r)
			require.NoError(t, err)
			var ri dynamic.ResourceInterface = c
			if ns != "" {
				ri = c.Namespace(ns)
			}
			if tc.create {
				_, err = ri.Create(ctx, obj, metav1.CreateOptions{})
			} else {
				var sub []string
				if tc.subresource != "" {
					sub = []string{tc.subresource}
				}
				_, err = ri.Patch(ctx, name, types.MergePatchType, []byte(tc.patch), metav1.PatchOptions{}, sub...)
			}
			if len(tc.refused) == 0 {
				require.NoError(t, err, "the write must be admitted")
				if tc.audit != "" {
					key := policy + "/break-glass"
					got, err := auditAnnotation(ctx, r.Resource, name, tc.as.name, key)
					require.NoError(t, err)
					assert.Equal(t, fill(tc.audit, ns, name), got, "the audit annotation %s", key)
					t.Logf("audit annotation %s: %s", key, got)
				}
				return
			}
			requireRefused(t, err, policy, ns, name, tc.refused)
		})
	}
}

// requireRefused checks err is the refusal of policy, one line, with every phrase.
func requireRefused(t *testing.T, err error, policy, ns, name string, phrases []string) {
	t.Helper()
	require.Error(t, err, "the write must be refused")
	assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "want Forbidden or Invalid, got %v", apierrors.ReasonForError(err))
	msg := err.Error()
	t.Logf("refused: %s", msg)
	assert.Contains(t, msg, "ValidatingAdmissionPolicy '"+policy+"' with binding '"+policy+"' denied request: ")
	assert.NotContains(t, msg, "\n", "a refusal is one line")
	for _, p := range phrases {
		assert.Contains(t, msg, fill(p, ns, name))
	}
}

// fill fills %[1]s and %[2]s of format with ns and name.
func fill(format, ns, name string) string {
	return strings.NewReplacer("%[1]s", ns, "%[2]s", name).Replace(format)
}

const (
	// Who may, as every refusal names them.
	mayApprove = "a Manual InstallPlan is approved only by Tollgate (" + managerName + "), once its policies allow the upgrade, or by a member of the break-glass group " + breakGlassGroup + ";"
	mayMovePin = "only Tollgate (" + managerName + ") or a member of the break-glass group " + breakGlassGroup + " may change the pin or its record;"
	maySwitch  = "only a member of the break-glass group " + breakGlassGroup + " may switch it (Tollgate itself, " + managerName + ", never does);"
)

func TestGateLockInstallPlanApproval(t *testing.T) {
	ctx := t.Context()
	require.NoError(t, applyGateLockOnce(ctx))
	ns, err := namespace(ctx, upstream, "plans")
	require.NoError(t, err)
	owner := subscription(ns, "etcd", "Manual")
	require.NoError(t, upstream.Client.Create(ctx, owner))
	unapproved := func(ns, name string) *unstructured.Unstructured { return installPlan(ns, name, false, owner) }
	approved := func(ns, name string) *unstructured.Unstructured { return installPlan(ns, name, true, owner) }
	const approve = `{"spec":{"approved":true}}`

	runLockCases(t, installPlans, ns, planPolicy, []lockCase{
		{
			name: "a tenant approving a Manual InstallPlan is refused, and pointed at what holds it",
			as:   tenant, object: unapproved, patch: approve,
			refused: []string{"approving InstallPlan %[1]s/%[2]s (spec.approved to true) is refused:", mayApprove,
				"to lift the hold instead, see what holds the upgrade and what would lift it: kubectl tollgate explain -n %[1]s etcd"},
		},
		{
			name: "a tenant approving a plan no Subscription owns is pointed at the namespace's gates",
			as:   tenant, object: func(ns, name string) *unstructured.Unstructured { return installPlan(ns, name, false, nil) }, patch: approve,
			refused: []string{"approving InstallPlan %[1]s/%[2]s", mayApprove, "what would lift it: kubectl tollgate status -n %[1]s"},
		},
		{
			name: "Tollgate's manager approving it is admitted",
			as:   manager, object: unapproved, patch: `{"metadata":{"annotations":{"tollgate.dev/approval":"{}"}},"spec":{"approved":true}}`,
		},
		{
			name: "a member of the break-glass group approving it is admitted, and the audit log says who",
			as:   breakGlass, object: unapproved, patch: approve,
			audit: "alice (break-glass group " + breakGlassGroup + "): approving InstallPlan %[1]s/%[2]s",
		},
		{
			name: "a tenant labelling and annotating an unapproved plan is admitted",
			as:   tenant, object: unapproved, patch: `{"metadata":{"labels":{"team":"storage"},"annotations":{"example.com/ticket":"CHG-1"}}}`,
		},
		{
			name: "a tenant un-approving an approved plan is admitted",
			as:   tenant, object: approved, patch: `{"spec":{"approved":false}}`,
		},
		{
			name: "OLM writing an unapproved plan's status is admitted",
			as:   olmOperator, object: unapproved, subresource: "status",
			patch: `{"status":{"phase":"RequiresApproval","catalogSources":["operatorhubio"]}}`,
		},
		{
			name: "OLM creating an approved Automatic plan is admitted",
			as:   olmOperator, object: approved, create: true,
		},
	})
}

// TestGateLockInstallPlanExecution: OLM runs a plan whose status.phase is Installing, approved
// or not, so no one may move an unapproved plan there; OLM's own move of an approved plan, and
// its other status writes, are admitted.
func TestGateLockInstallPlanExecution(t *testing.T) {
	ctx := t.Context()
	require.NoError(t, applyGateLockOnce(ctx))
	ns, err := namespace(ctx, upstream, "execution")
	require.NoError(t, err)
	waiting := func(approved bool) func(ns, name string) *unstructured.Unstructured {
		return func(ns, name string) *unstructured.Unstructured {
			plan := installPlan(ns, name, false, nil)
			require.NoError(t, unstructured.SetNestedField(plan.Object, approved, "spec", "approved"))
			return plan
		}
	}
	require.NoError(t, waitExecutionLocked(ctx, ns, waiting(false)))
	const install = `{"status":{"phase":"Installing","catalogSources":["operatorhubio"]}}`
	refused := []string{"moving InstallPlan %[1]s/%[2]s to phase Installing while spec.approved is false is refused: OLM would install it without an approval;"}

	runLockCases(t, installPlans, ns, executionPolicy, []lockCase{
		{name: "a tenant running an unapproved plan through its status is refused", as: tenant, object: waiting(false), subresource: "status", patch: install, refused: refused},
		{name: "so is a member of the break-glass group: the way is to approve it", as: breakGlass, object: waiting(false), subresource: "status", patch: install, refused: refused},
		{name: "OLM moving an approved plan to Installing is admitted", as: olmOperator, object: waiting(true), subresource: "status", patch: install},
		{name: "OLM's other status writes of an unapproved plan are admitted", as: olmOperator, object: waiting(false), subresource: "status", patch: `{"status":{"phase":"RequiresApproval","catalogSources":["operatorhubio"]}}`},
	})
}

// waitExecutionLocked dry-runs the write the execution policy refuses until it does: the API
// server picks up a new policy after a moment.
func waitExecutionLocked(ctx context.Context, ns string, plan func(ns, name string) *unstructured.Unstructured) error {
	obj := plan(ns, "execution-probe")
	if err := upstream.Client.Create(ctx, obj); err != nil {
		return fmt.Errorf("create the probe plan: %w", err)
	}
	c, err := tenant.resource(upstream, installPlans)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, err := c.Namespace(ns).Patch(ctx, obj.GetName(), types.MergePatchType, []byte(`{"status":{"phase":"Installing","catalogSources":["operatorhubio"]}}`),
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}, "status")
		if err != nil && strings.Contains(err.Error(), executionPolicy) {
			return nil
		}
	}
	return fmt.Errorf("%s did not refuse within 2 minutes", executionPolicy)
}

func TestGateLockSubscriptionApproval(t *testing.T) {
	ctx := t.Context()
	require.NoError(t, applyGateLockOnce(ctx))
	ns, err := namespace(ctx, upstream, "subscriptions")
	require.NoError(t, err)
	manual := func(ns, name string) *unstructured.Unstructured { return subscription(ns, name, "Manual") }
	automatic := func(ns, name string) *unstructured.Unstructured { return subscription(ns, name, "Automatic") }
	const toAutomatic = `{"spec":{"installPlanApproval":"Automatic"}}`
	const toManual = `{"spec":{"installPlanApproval":"Manual"}}`
	explain := "to lift the hold instead, see what holds the upgrade and what would lift it: kubectl tollgate explain -n %[1]s %[2]s"

	runLockCases(t, subscriptions, ns, subscriptionPolicy, []lockCase{
		{
			name: "a tenant switching a Manual Subscription to Automatic is refused",
			as:   tenant, object: manual, patch: toAutomatic,
			refused: []string{"switching Subscription %[1]s/%[2]s from installPlanApproval Manual to Automatic is refused:", maySwitch, explain},
		},
		{
			name: "a tenant removing Manual, which OLM reads as Automatic, is refused",
			as:   tenant, object: manual, patch: `{"spec":{"installPlanApproval":null}}`,
			refused: []string{"switching Subscription %[1]s/%[2]s from installPlanApproval Manual to none (OLM treats it as Automatic) is refused:", maySwitch, explain},
		},
		{
			name: "Tollgate's manager switching it to Automatic is refused too",
			as:   manager, object: manual, patch: toAutomatic,
			refused: []string{"switching Subscription %[1]s/%[2]s from installPlanApproval Manual to Automatic is refused:", maySwitch},
		},
		{
			name: "a member of the break-glass group switching it to Automatic is admitted, and the audit log says who",
			as:   breakGlass, object: manual, patch: toAutomatic,
			audit: "alice (break-glass group " + breakGlassGroup + "): switching Subscription %[1]s/%[2]s from installPlanApproval Manual to Automatic",
		},
		{
			name: "Tollgate's manager switching an Automatic Subscription to Manual is admitted",
			as:   manager, object: automatic, patch: toManual,
		},
		{
			name: "a tenant switching an Automatic Subscription to Manual is admitted",
			as:   tenant, object: automatic, patch: toManual,
		},
		{
			name: "a tenant changing the channel of a Manual Subscription is admitted",
			as:   tenant, object: manual, patch: `{"spec":{"channel":"fast","startingCSV":"etcdoperator.v0.9.2"}}`,
		},
		{
			name: "OLM writing a Manual Subscription's status is admitted",
			as:   olmOperator, object: manual, subresource: "status",
			patch: `{"status":{"state":"UpgradePending","lastUpdated":"2026-01-02T03:04:05Z"}}`,
		},
		{
			name: "OLM creating an Automatic Subscription for a dependency is admitted",
			as:   olmOperator, object: automatic, create: true,
		},
	})
}

func TestGateLockClusterExtensionPin(t *testing.T) {
	process.RequireBuild(t, olmv1CRDs, errNoOLMv1CRDs)
	ctx := t.Context()
	require.NoError(t, applyGateLockOnce(ctx))
	pinned := func(_, name string) *unstructured.Unstructured { return clusterExtension(name, "1.0.0", true) }
	unrecorded := func(_, name string) *unstructured.Unstructured { return clusterExtension(name, "1.0.0", false) }
	const (
		owns    = "Tollgate owns this pin (ExtensionGate %[2]s);"
		wayOut  = "to move the extension, change its ExtensionGate (spec.version, spec.channels or an override): kubectl tollgate explain clusterextension/%[2]s says what holds it and what would lift it;"
		letItGo = "to stop gating it, delete ExtensionGate %[2]s, which hands the pin back: Tollgate then removes its record, and the lock lets go"
	)
	record := func(version string) string {
		return `{"metadata":{"annotations":{"tollgate.dev/pin":` + quote(pinRecord(version)) + `}}}`
	}

	runLockCases(t, clusterExtensions, "", pinPolicy, []lockCase{
		{
			name: "a tenant moving a pinned version is refused",
			as:   tenant, object: pinned, patch: `{"spec":{"source":{"catalog":{"version":"1.1.0"}}}}`,
			refused: []string{`moving the pin of ClusterExtension %[2]s (spec.source.catalog.version "1.0.0" to "1.1.0") is refused:`, owns, mayMovePin, wayOut, letItGo},
		},
		{
			name: "a tenant widening a pinned version to a range is refused",
			as:   tenant, object: pinned, patch: `{"spec":{"source":{"catalog":{"version":">=1.0.0, <2.0.0"}}}}`,
			refused: []string{`moving the pin of ClusterExtension %[2]s (spec.source.catalog.version "1.0.0" to ">=1.0.0, <2.0.0") is refused:`, mayMovePin},
		},
		{
			name: "a tenant removing a pinned version is refused",
			as:   tenant, object: pinned, patch: `{"spec":{"source":{"catalog":{"version":null}}}}`,
			refused: []string{`moving the pin of ClusterExtension %[2]s (spec.source.catalog.version "1.0.0" to "") is refused:`, mayMovePin},
		},
		{
			name: "a tenant changing the pin record is refused",
			as:   tenant, object: pinned, patch: record("1.1.0"),
			refused: []string{"changing Tollgate's pin record (annotation tollgate.dev/pin) of ClusterExtension %[2]s is refused:", owns, mayMovePin, letItGo},
		},
		{
			name: "a tenant removing the pin record is refused",
			as:   tenant, object: pinned, patch: `{"metadata":{"annotations":{"tollgate.dev/pin":null}}}`,
			refused: []string{"removing Tollgate's pin record (annotation tollgate.dev/pin) from ClusterExtension %[2]s is refused:", owns, mayMovePin, letItGo},
		},
		{
			name: "a tenant removing the record and moving the version in one write is refused",
			as:   tenant, object: pinned, patch: `{"metadata":{"annotations":{"tollgate.dev/pin":null}},"spec":{"source":{"catalog":{"version":"1.1.0"}}}}`,
			refused: []string{`moving the pin of ClusterExtension %[2]s (spec.source.catalog.version "1.0.0" to "1.1.0") and removing its record (annotation tollgate.dev/pin) is refused:`, mayMovePin},
		},
		{
			name: "a tenant adding a pin record to an extension without one is refused",
			as:   tenant, object: unrecorded, patch: record("1.0.0"),
			refused: []string{"adding Tollgate's pin record (annotation tollgate.dev/pin) to ClusterExtension %[2]s is refused: the record is Tollgate's, written with each pin it sets;",
				mayMovePin, "to have Tollgate gate this extension, create an ExtensionGate named %[2]s"},
		},
		{
			name: "a tenant adding an empty pin record is refused too",
			as:   tenant, object: unrecorded, patch: `{"metadata":{"annotations":{"tollgate.dev/pin":""}}}`,
			refused: []string{"adding Tollgate's pin record (annotation tollgate.dev/pin) to ClusterExtension %[2]s is refused:"},
		},
		{
			name: "a tenant moving the version of an extension without a record is admitted",
			as:   tenant, object: unrecorded, patch: `{"spec":{"source":{"catalog":{"version":"1.1.0"}}}}`,
		},
		{
			name: "Tollgate's manager moving the pin with its record is admitted",
			as:   manager, object: pinned, patch: `{"metadata":{"annotations":{"tollgate.dev/pin":` + quote(pinRecord("1.1.0")) + `}},"spec":{"source":{"catalog":{"version":"1.1.0"}}}}`,
		},
		{
			name: "Tollgate's manager adopting an extension with its first record is admitted",
			as:   manager, object: unrecorded, patch: record("1.0.0"),
		},
		{
			name: "a member of the break-glass group moving the pin is admitted, and the audit log says who",
			as:   breakGlass, object: pinned, patch: `{"spec":{"source":{"catalog":{"version":"1.1.0"}}}}`,
			audit: `alice (break-glass group ` + breakGlassGroup + `): moving the pin of ClusterExtension %[2]s (spec.source.catalog.version "1.0.0" to "1.1.0")`,
		},
		{
			name: "a member of the break-glass group removing the record once the gate is gone is admitted",
			as:   breakGlass, object: pinned, patch: `{"metadata":{"annotations":{"tollgate.dev/pin":null}}}`,
			audit: "alice (break-glass group " + breakGlassGroup + "): removing Tollgate's pin record (annotation tollgate.dev/pin) from ClusterExtension %[2]s",
		},
		{
			name: "a tenant changing labels, other annotations and finalizers of a pinned extension is admitted",
			as:   tenant, object: pinned, patch: `{"metadata":{"labels":{"team":"gitops"},"annotations":{"example.com/owner":"gitops"},"finalizers":["example.com/cleanup"]}}`,
		},
		{
			name: "operator-controller adding its finalizer to a pinned extension is admitted",
			as:   operatorController, object: pinned, patch: `{"metadata":{"finalizers":["olm.operatorframework.io/cleanup-unpack-cache"]}}`,
		},
		{
			name: "operator-controller writing a pinned extension's status is admitted",
			as:   operatorController, object: pinned, subresource: "status",
			patch: `{"status":{"conditions":[{"type":"Installed","status":"True","reason":"Succeeded","message":"installed 1.0.0","lastTransitionTime":"2026-01-02T03:04:05Z","observedGeneration":1}]}}`,
		},
	})
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string: cannot fail
	return string(b)
}

// The break-glass group is read from the lock's ConfigMap, the one place an overlay changes it:
// a new group takes over from the old one, and without the ConfigMap every update of the kinds
// the lock guards is refused, Tollgate's own too.
func TestGateLockParamsLiveInOneConfigMap(t *testing.T) {
	ctx := t.Context()
	require.NoError(t, applyGateLockOnce(ctx))
	ns, err := namespace(ctx, upstream, "params")
	require.NoError(t, err)
	key := client.ObjectKey{Namespace: gateLockNamespace, Name: gateLockParams}
	params := &unstructured.Unstructured{}
	params.SetAPIVersion("v1")
	params.SetKind("ConfigMap")
	require.NoError(t, upstream.Client.Get(ctx, key, params))
	original := params.DeepCopy()
	t.Cleanup(func() {
		// Put the shipped ConfigMap back and wait until the lock reads it again, for the
		// tests that come after.
		ctx := context.Background()
		current := original.DeepCopy()
		current.SetResourceVersion("")
		err := upstream.Client.Create(ctx, current)
		if apierrors.IsAlreadyExists(err) {
			latest := params.DeepCopy()
			if err = upstream.Client.Get(ctx, key, latest); err == nil {
				latest.Object["data"] = original.Object["data"]
				err = upstream.Client.Update(ctx, latest)
			}
		}
		require.NoError(t, err)
		require.NoError(t, waitGateLock(ctx, upstream, breakGlassGroup))
	})

	const emergency = "platform:emergency"
	patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"breakGlassGroup":"`+emergency+`"}}`))
	require.NoError(t, upstream.Client.Patch(ctx, params, patch))
	require.NoError(t, waitGateLock(ctx, upstream, emergency))

	owner := subscription(ns, "etcd", "Manual")
	require.NoError(t, upstream.Client.Create(ctx, owner))
	approve := func(t *testing.T, u user, name string) error {
		t.Helper()
		require.NoError(t, upstream.Client.Create(ctx, installPlan(ns, name, false, owner)))
		c, err := u.resource(upstream, installPlans)
		require.NoError(t, err)
		_, err = c.Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"approved":true}}`), metav1.PatchOptions{})
		return err
	}
	t.Run("a member of the old group is refused, and the refusal names the new one", func(t *testing.T) {
		err := approve(t, breakGlass, "old-group")
		requireRefused(t, err, planPolicy, ns, "old-group", []string{"or by a member of the break-glass group " + emergency + ";"})
	})
	t.Run("a member of the new group is admitted", func(t *testing.T) {
		require.NoError(t, approve(t, member("bob", emergency), "new-group"))
	})
	// The API server looks a binding's param up before it evaluates the policy's
	// matchConditions: without the ConfigMap, every update of the kinds the lock guards is
	// refused, a write of labels included, while their status (a subresource) stays writable.
	t.Run("without the ConfigMap every update of a guarded kind is refused, Tollgate's too", func(t *testing.T) {
		require.NoError(t, upstream.Client.Delete(ctx, params))
		gone := probe{policy: planPolicy, r: installPlans, obj: installPlan(ns, "no-params", false, owner), patch: `{"spec":{"approved":true}}`}
		require.NoError(t, upstream.Client.Create(ctx, gone.obj))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			answer, err := dryRunPatch(ctx, upstream, manager, gone)
			require.NoError(c, err)
			assert.Error(c, answer, "the API server still reads the ConfigMap")
		}, 2*time.Minute, 200*time.Millisecond)
		const noParams = "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
		_, err := patchAs(ctx, manager, gone, "")
		requireRefused(t, err, planPolicy, ns, "no-params", []string{noParams})
		_, err = patchAs(ctx, member("bob", emergency), probe{r: subscriptions, obj: owner, patch: `{"spec":{"installPlanApproval":"Automatic"}}`}, "")
		requireRefused(t, err, subscriptionPolicy, ns, owner.GetName(), []string{noParams})
		_, err = patchAs(ctx, tenant, probe{r: installPlans, obj: gone.obj, patch: `{"metadata":{"labels":{"team":"storage"}}}`}, "")
		requireRefused(t, err, planPolicy, ns, "no-params", []string{noParams})
		_, err = patchAs(ctx, olmOperator, probe{r: installPlans, obj: gone.obj, patch: `{"status":{"phase":"RequiresApproval","catalogSources":["operatorhubio"]}}`}, "status")
		require.NoError(t, err, "OLM's status writes never meet the lock")
	})
}

// patchAs sends p's patch to subresource ("" for the object) as u, for real.
func patchAs(ctx context.Context, u user, p probe, subresource string) (*unstructured.Unstructured, error) {
	c, err := u.resource(upstream, p.r)
	if err != nil {
		return nil, err
	}
	var sub []string
	if subresource != "" {
		sub = []string{subresource}
	}
	return c.Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.MergePatchType, []byte(p.patch), metav1.PatchOptions{}, sub...)
}
