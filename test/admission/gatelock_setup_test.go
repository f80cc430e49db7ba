package admission

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/gatelock"
	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// The gate lock (config/components/gate-lock) as it is shipped.
const (
	planPolicy         = "tollgate-gate-lock-installplan-approval"
	executionPolicy    = "tollgate-gate-lock-installplan-execution"
	pinPolicy          = "tollgate-gate-lock-clusterextension-pin"
	subscriptionPolicy = "tollgate-gate-lock-subscription-approval"
	gateLockParams     = "tollgate-gate-lock"
	gateLockNamespace  = "tollgate-system"
	breakGlassGroup    = "tollgate:break-glass"
	managerName        = "system:serviceaccount:tollgate-system:tollgate-manager"
)

var (
	installPlans      = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	subscriptions     = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}
	clusterExtensions = schema.GroupVersionResource{Group: "olm.operatorframework.io", Version: "v1", Resource: "clusterextensions"}
)

// errNoOLMv1CRDs says OLM v1's CRDs, which serve the ClusterExtension, were not found.
var errNoOLMv1CRDs = errors.New("OLM v1's CRDs not found: run `make olmv1`, or set TOLLGATE_OLMV1_BIN to a folder holding crds/")

// user is someone the tests act as, by impersonation.
type user struct {
	name   string
	groups []string
}

var (
	tenant     = user{name: "tenant", groups: []string{"system:authenticated"}}
	breakGlass = user{name: "alice", groups: []string{breakGlassGroup, "system:authenticated"}}
	manager    = user{name: managerName, groups: serviceAccountGroups("tollgate-system")}
	// OLM's own controllers, under the names upstream installs them with.
	olmOperator        = user{name: "system:serviceaccount:olm:olm-operator-serviceaccount", groups: serviceAccountGroups("olm")}
	operatorController = user{name: "system:serviceaccount:olmv1-system:operator-controller-controller-manager", groups: serviceAccountGroups("olmv1-system")}
)

func serviceAccountGroups(ns string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
}

// member is a member of group (and of no other group but system:authenticated).
func member(name, group string) user {
	return user{name: name, groups: []string{group, "system:authenticated"}}
}

// resource is a client of env for r, acting as u.
func (u user) resource(env *controlplane.Env, r schema.GroupVersionResource) (dynamic.NamespaceableResourceInterface, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.name, Groups: u.groups}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client as %s: %w", u.name, err)
	}
	return dyn.Resource(r), nil
}

// gateLockOptions has the API server serve OLM v1's CRDs too, when built, and write an audit
// log of the writes to OLM's kinds, in dir, where the gate lock records each break-glass use.
func gateLockOptions(opts controlplane.Options, dir string) (controlplane.Options, error) {
	if build := process.FindBuild("TOLLGATE_OLMV1_BIN", "olmv1", "crds"); build != "" {
		olmv1CRDs = filepath.Join(build, "crds")
		opts.CRDDirs = append(opts.CRDDirs, olmv1CRDs)
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return opts, fmt.Errorf("write the audit policy: %w", err)
	}
	auditLog = filepath.Join(dir, "audit.log")
	opts.APIServerFlags = map[string]string{"audit-policy-file": policy, "audit-log-path": auditLog}
	return opts, nil
}

// auditPolicy records the metadata (and annotations) of every write to the kinds the gate lock
// guards, and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch]
    resources:
      - group: operators.coreos.com
        resources: [installplans, subscriptions]
      - group: olm.operatorframework.io
        resources: [clusterextensions]
  - level: None
`

var (
	// olmv1CRDs is the folder of OLM v1's CRDs (`make olmv1`), which upstream then serves
	// too; "" when not built.
	olmv1CRDs string
	// auditLog is the path of upstream's audit log.
	auditLog string
)

var (
	gateLockApplied sync.Once
	gateLockErr     error
)

// applyGateLockOnce applies the gate lock to upstream the first time a test asks.
func applyGateLockOnce(ctx context.Context) error {
	gateLockApplied.Do(func() { gateLockErr = applyGateLock(ctx, upstream) })
	return gateLockErr
}

// applyGateLock creates what an overlay that adds config/components/gate-lock to nothing else
// renders, lets every authenticated user write the kinds it guards (as RBAC would let a tenant),
// and waits until the API server enforces all three policies.
func applyGateLock(ctx context.Context, env *controlplane.Env) error {
	objs, err := renderGateLock()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gateLockNamespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", gateLockNamespace, err)
	}
	for _, obj := range objs {
		if err := env.Client.Create(ctx, obj); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if err := grantWrites(ctx, env); err != nil {
		return err
	}
	return waitGateLock(ctx, env, breakGlassGroup)
}

// renderGateLock builds the overlay that lists the component alone, as an admin's would.
func renderGateLock() ([]*unstructured.Unstructured, error) { return kustomize(gatelock.Overlay) }

// grantWrites lets every authenticated user create, update and patch InstallPlans,
// Subscriptions and ClusterExtensions and their status: what RBAC lets a careless tenant do,
// and OLM's controllers, whose writes the lock must never refuse.
func grantWrites(ctx context.Context, env *controlplane.Env) error {
	const name = "tollgate-gate-lock-test-writer"
	verbs := []string{"get", "list", "watch", "create", "update", "patch"}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"installplans", "installplans/status", "subscriptions", "subscriptions/status"}, Verbs: verbs},
			{APIGroups: []string{"olm.operatorframework.io"}, Resources: []string{"clusterextensions", "clusterextensions/status", "clusterextensions/finalizers"}, Verbs: verbs},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}},
	}
	if err := env.Client.Create(ctx, role); err != nil {
		return fmt.Errorf("create ClusterRole %s: %w", name, err)
	}
	if err := env.Client.Create(ctx, binding); err != nil {
		return fmt.Errorf("create ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}

// probe is a write one policy of the lock must refuse to a tenant and admit from a member of
// the break-glass group.
type probe struct {
	policy string
	r      schema.GroupVersionResource
	obj    *unstructured.Unstructured
	patch  string
}

// waitGateLock dry-runs, until both happen for every policy, a write the policy refuses to a
// tenant, with a message naming group (read from the lock's ConfigMap), and the same write by
// a member of group, which it must admit: the API server picks up a new policy, binding or
// param after a moment.
func waitGateLock(ctx context.Context, env *controlplane.Env, group string) error {
	probes, err := gateLockProbes(ctx, env)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	var last []string
	for time.Now().Before(deadline) {
		last = last[:0]
		for _, p := range probes {
			refused, err := dryRunPatch(ctx, env, tenant, p)
			if err != nil {
				return err
			}
			admitted, err := dryRunPatch(ctx, env, member("probe", group), p)
			if err != nil {
				return err
			}
			enforced := refused != nil && strings.Contains(refused.Error(), p.policy) && strings.Contains(refused.Error(), "group "+group)
			if !enforced || admitted != nil {
				last = append(last, fmt.Sprintf("%s: tenant: %v; member of %s: %v", p.policy, refused, group, admitted))
			}
		}
		if len(last) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the gate lock was not enforced with group %s within 2 minutes: %s", group, strings.Join(last, "; "))
}

// dryRunPatch dry-runs p as u and returns the API server's answer: nil when admitted. err is a
// failure to ask.
func dryRunPatch(ctx context.Context, env *controlplane.Env, u user, p probe) (answer, err error) {
	c, err := u.resource(env, p.r)
	if err != nil {
		return nil, err
	}
	var ri dynamic.ResourceInterface = c
	if ns := p.obj.GetNamespace(); ns != "" {
		ri = c.Namespace(ns)
	}
	_, answer = ri.Patch(ctx, p.obj.GetName(), types.MergePatchType, []byte(p.patch), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	return answer, nil
}

var (
	probesOnce sync.Once
	probesList []probe
	probesErr  error
)

// gateLockProbes creates, once, the objects the probes write: a Manual Subscription and its
// unapproved plan in namespace gate-lock-probe, and a pinned ClusterExtension where OLM v1 is
// served.
func gateLockProbes(ctx context.Context, env *controlplane.Env) ([]probe, error) {
	probesOnce.Do(func() {
		probesList, probesErr = createProbes(ctx, env)
	})
	return probesList, probesErr
}

func createProbes(ctx context.Context, env *controlplane.Env) ([]probe, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gate-lock-probe"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	sub := subscription(ns.Name, "probe", "Manual")
	if err := env.Client.Create(ctx, sub); err != nil {
		return nil, fmt.Errorf("create Subscription %s: %w", sub.GetName(), err)
	}
	plan := installPlan(ns.Name, "probe", false, sub)
	if err := env.Client.Create(ctx, plan); err != nil {
		return nil, fmt.Errorf("create InstallPlan %s: %w", plan.GetName(), err)
	}
	probes := []probe{
		{policy: planPolicy, r: installPlans, obj: plan, patch: `{"spec":{"approved":true}}`},
		{policy: subscriptionPolicy, r: subscriptions, obj: sub, patch: `{"spec":{"installPlanApproval":"Automatic"}}`},
	}
	if olmv1CRDs != "" {
		ext := clusterExtension("gate-lock-probe", "1.0.0", true)
		if err := env.Client.Create(ctx, ext); err != nil {
			return nil, fmt.Errorf("create ClusterExtension %s: %w", ext.GetName(), err)
		}
		probes = append(probes, probe{policy: pinPolicy, r: clusterExtensions, obj: ext, patch: `{"spec":{"source":{"catalog":{"version":"1.1.0"}}}}`})
	}
	return probes, nil
}

// subscription is a Subscription to package etcd; approval "" leaves installPlanApproval out.
func subscription(ns, name, approval string) *unstructured.Unstructured {
	spec := map[string]any{"name": "etcd", "channel": "stable", "source": "operatorhubio", "sourceNamespace": "olm"}
	if approval != "" {
		spec["installPlanApproval"] = approval
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "Subscription",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       spec,
	}}
}

// installPlan is a plan as OLM creates it for owner (none when nil): approved when Automatic.
func installPlan(ns, name string, approved bool, owner *unstructured.Unstructured) *unstructured.Unstructured {
	approval := "Manual"
	if approved {
		approval = "Automatic"
	}
	plan := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "InstallPlan",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"approval":                   approval,
			"approved":                   approved,
			"clusterServiceVersionNames": []any{"etcdoperator.v0.9.4"},
			"generation":                 int64(1),
		},
	}}
	if owner != nil {
		plan.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Name: owner.GetName(), UID: owner.GetUID(),
		}})
	}
	return plan
}

// clusterExtension is a ClusterExtension of package argocd-operator pinned at version, with
// Tollgate's record of that pin when recorded.
func clusterExtension(name, version string, recorded bool) *unstructured.Unstructured {
	ext := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "olm.operatorframework.io/v1",
		"kind":       "ClusterExtension",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"namespace":      "argocd",
			"serviceAccount": map[string]any{"name": "argocd-installer"},
			"source": map[string]any{
				"sourceType": "Catalog",
				"catalog":    map[string]any{"packageName": "argocd-operator", "version": version},
			},
		},
	}}
	if recorded {
		ext.SetAnnotations(map[string]string{tollgatev1alpha1.PinRecordAnnotation: pinRecord(version)})
	}
	return ext
}

// pinRecord is the record Tollgate writes with a pin at version.
func pinRecord(version string) string {
	return tollgatev1alpha1.PinRecord{Version: version, Installed: "1.0.0", PinnedAt: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}.String()
}

// auditEvent is what the tests read of an audit log line: an impersonated request's user is
// impersonatedUser (user is the test's admin, who impersonates).
type auditEvent struct {
	Stage            string `json:"stage"`
	ImpersonatedUser struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef struct {
		Resource string `json:"resource"`
		Name     string `json:"name"`
	} `json:"objectRef"`
	Annotations map[string]string `json:"annotations"`
}

// auditAnnotation waits until the audit log has an event of a request by username on the
// object name (of resource) that completed, and returns its annotation key ("" when absent).
func auditAnnotation(ctx context.Context, resource, name, username, key string) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		f, err := os.Open(auditLog)
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("read the audit log: %w", err)
		}
		if err == nil {
			found, value, err := scanAudit(f, resource, name, username, key)
			_ = f.Close()
			if err != nil || found {
				return value, err
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("no completed request of %s on %s %s in the audit log within a minute", username, resource, name)
}

func scanAudit(f *os.File, resource, name, username, key string) (found bool, value string, err error) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return false, "", fmt.Errorf("decode an audit event: %w", err)
		}
		if ev.Stage == "ResponseComplete" && ev.ImpersonatedUser.Username == username && ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == name {
			return true, ev.Annotations[key], nil
		}
	}
	return false, "", sc.Err()
}
