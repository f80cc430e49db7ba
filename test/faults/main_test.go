package faults

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

const (
	globalNS = "olm"
	policyNS = "tollgate-system"
	// wait bounds the polls that span a fault (an API server restart, a failover): generous,
	// the machine may be busy.
	wait = 60 * time.Second
	tick = 50 * time.Millisecond
)

// env is the control plane every test of the package shares; the tests run one after the
// other, each with managers of its own that it stops before it ends.
var env *controlplane.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	var err error
	env, err = controlplane.Start(controlplane.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := apiextensionsv1.AddToScheme(env.Client.Scheme()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, ns := range []string{globalNS, policyNS} {
		if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// faults is what one manager's client does to its writes, and what it saw of them. Faults
// apply only in namespace ns (the test's), so a manager ignores what other tests left behind.
type faults struct {
	ns string
	// statusConflicts is how many status writes of each gate answer 409 Conflict before
	// one goes through.
	statusConflicts int
	// concurrentWrite names plans another writer changes (a label) between the manager's
	// read and its first approval: the approval's resourceVersion precondition fails on the
	// API server, a real 409.
	concurrentWrite map[string]bool
	// fakeConflict names plans whose first approval answers 409 Conflict without reaching
	// the API server, nothing having changed.
	fakeConflict map[string]bool
	// writer is the other writer of concurrentWrite.
	writer client.Client

	mu sync.Mutex
	// log is every write that went through, in order: "status <gate> lastApproved=<plan>"
	// and "approve <plan>".
	log []string
	// approved counts the approvals that went through, by plan name.
	approved map[string]int
	// statusSeen counts the status writes tried, by gate; conflicts counts the 409s
	// answered (injected or from the API server), by what: "status", "approve-real",
	// "approve-fake".
	statusSeen map[string]int
	conflicts  map[string]int
	approveTry map[string]int
}

func (f *faults) init() *faults {
	f.approved, f.statusSeen, f.conflicts, f.approveTry = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	return f
}

// Approvals is how many approvals of plan went through.
func (f *faults) Approvals(plan string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.approved[plan]
}

// Conflicts is how many 409s of kind were answered.
func (f *faults) Conflicts(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conflicts[kind]
}

// Log is what went through, in order.
func (f *faults) Log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

var gates = schema.GroupResource{Group: "tollgate.dev", Resource: "upgradegates"}
var plans = schema.GroupResource{Group: "operators.coreos.com", Resource: "installplans"}

// client wraps the manager's real client with the faults.
func (f *faults) client(cfg *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(cfg, opts)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			gate, ok := obj.(*tollgatev1alpha1.UpgradeGate)
			if !ok || sub != "status" || gate.Namespace != f.ns {
				return c.SubResource(sub).Update(ctx, obj, opts...)
			}
			f.mu.Lock()
			f.statusSeen[gate.Name]++
			inject := f.statusSeen[gate.Name] <= f.statusConflicts
			if inject {
				f.conflicts["status"]++
			}
			f.mu.Unlock()
			if inject {
				return apierrors.NewConflict(gates, gate.Name, fmt.Errorf("injected by the test"))
			}
			if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
				return err
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			last := gate.Status.Decision.LastApprovedInstallPlan
			f.log = append(f.log, "status "+gate.Name+" lastApproved="+last)
			return nil
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			plan, ok := obj.(*v1alpha1.InstallPlan)
			if !ok || plan.Namespace != f.ns || !plan.Spec.Approved {
				return c.Patch(ctx, obj, patch, opts...)
			}
			f.mu.Lock()
			f.approveTry[plan.Name]++
			first := f.approveTry[plan.Name] == 1
			fake := first && f.fakeConflict[plan.Name]
			if fake {
				f.conflicts["approve-fake"]++
			}
			f.mu.Unlock()
			if fake {
				return apierrors.NewConflict(plans, plan.Name, fmt.Errorf("injected by the test"))
			}
			if first && f.concurrentWrite[plan.Name] {
				other := &v1alpha1.InstallPlan{}
				if err := f.writer.Get(ctx, client.ObjectKeyFromObject(plan), other); err != nil {
					return err
				}
				other.Labels = map[string]string{"touched-by": "another-writer"}
				if err := f.writer.Update(ctx, other); err != nil {
					return err
				}
			}
			err := c.Patch(ctx, obj, patch, opts...)
			if apierrors.IsConflict(err) {
				f.mu.Lock()
				f.conflicts["approve-real"]++
				f.mu.Unlock()
			}
			if err != nil {
				return err
			}
			f.mu.Lock()
			f.approved[plan.Name]++
			rec, _ := tollgatev1alpha1.RecordedApproval(plan.Annotations)
			f.log = append(f.log, "approve "+plan.Name+" record="+rec.Gate+"@"+rec.PolicyRevision)
			f.mu.Unlock()
			return nil
		},
	}), nil
}

// manager is one Tollgate manager running in the test process, as one replica would.
type manager struct {
	mgr    ctrl.Manager
	faults *faults
	cancel context.CancelFunc
	done   chan error
}

// managerOptions say how a manager runs.
type managerOptions struct {
	// name is the manager's user agent.
	name string
	// leaseNamespace, when set, turns leader election on, with a short lease, in that
	// namespace; a cancelled manager keeps its lease, as a killed process does.
	leaseNamespace string
}

// Lease timing of the managers that elect a leader: a standby takes over at most
// leaseDuration (plus a retry period) after the leader's last renewal.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// startManager starts a manager whose client applies f; the test's end stops it.
func startManager(t *testing.T, f *faults, opts managerOptions) *manager {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = opts.name
	mo := ctrl.Options{
		Scheme:  apis.NewScheme(),
		Cache:   controllers.CacheOptions(policyNS),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Other managers run (or ran) in the same process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		NewClient:  f.client,
	}
	if opts.leaseNamespace != "" {
		d, r, p := leaseDuration, renewDeadline, retryPeriod
		mo.LeaderElection = true
		mo.LeaderElectionID = controllers.LeaderElectionID
		mo.LeaderElectionNamespace = opts.leaseNamespace
		mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod = &d, &r, &p
		mo.LeaderElectionReleaseOnCancel = false
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: policyNS})
	require.NoError(t, err)
	m := &manager{mgr: mgr, faults: f, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { m.kill(t) })
	return m
}

// kill cancels the manager and waits until it has stopped. With leader election it keeps
// its lease, as a killed process does. Killing it again does nothing.
func (m *manager) kill(t *testing.T) {
	t.Helper()
	m.cancel()
	select {
	case err, ok := <-m.done:
		if ok {
			close(m.done)
		}
		// A leader cancelled without releasing its lease reports it as lost.
		if err != nil && !strings.Contains(err.Error(), "leader election lost") {
			t.Errorf("manager stopped with: %v", err)
		}
	case <-time.After(wait):
		t.Errorf("manager did not stop within %s", wait)
	}
}

// elected says whether the manager leads.
func (m *manager) elected() bool {
	select {
	case <-m.mgr.Elected():
		return true
	default:
		return false
	}
}

// approvedWithTheirRecord checks that each approval in log carried the approval record of
// the plan's gate, with a policy revision.
func approvedWithTheirRecord(t *testing.T, log []string, gateOf map[string]string) {
	t.Helper()
	for _, entry := range log {
		rest, ok := strings.CutPrefix(entry, "approve ")
		if !ok {
			continue
		}
		plan, record, _ := strings.Cut(rest, " record=")
		gate, revision, _ := strings.Cut(record, "@")
		assert.Equal(t, gateOf[plan], gate, "the approval of %s carries its gate's record; writes: %q", plan, log)
		assert.NotEmpty(t, revision, "the record of %s names the policy revision", plan)
	}
}

func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }
