package soak

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

const (
	// defaultOps is the short form's number of operations (make test); make soak asks for more.
	defaultOps = 300
	// defaultGrace is how long a state must have been denying before an approval for the
	// approval to be a violation (see doc.go).
	defaultGrace = 2 * time.Second
	// defaultPolicyGrace is the same for the policy set: a ConfigMap's new version is in force
	// once compiled, over a second under the race detector on a busy machine.
	defaultPolicyGrace = 10 * time.Second
	// settleBound is how long, once the churn stops and the last override has expired, every
	// plan the final state allows has to be approved.
	settleBound = 30 * time.Second
	// sitePolicy is the policy ConfigMap the soak swaps; variantAnnotation names its variant.
	sitePolicy        = "soak-site"
	variantAnnotation = "soak.tollgate.dev/variant"
)

var (
	soakNamespaces = []string{"soak-0", "soak-1", "soak-2"}
	soakPackages   = []string{"alpha", "beta", "gamma"}
	overrideCodes  = []string{"OperatorNotUpgradeable", "CatalogSourceUnhealthy", "SiteHold"}
)

// siteRule is a good policy variant: SiteHold denies what cond matches.
func siteRule(cond, message string) string {
	return `package tollgate.site

# METADATA
# custom:
#   code: SiteHold
deny contains d if {
	` + cond + `
	d := {"code": "SiteHold", "message": "` + message + `"}
}
`
}

// policyVariants are the versions of the site policy the churn swaps in; "absent" deletes it.
var policyVariants = map[string]string{
	"hold-soak-1": siteRule(`input.subscription.metadata.namespace == "soak-1"`, "soak-1 is frozen"),
	"hold-beta":   siteRule(`input.subscription.spec.name == "beta"`, "beta needs a ticket"),
	"broken":      "package tollgate.site\n\ndeny contains d if {\n\td := {\"code\": \"SiteHold\"\n}\n",
	"absent":      "",
}

// member is one operator of the churn, as the test (playing OLM) knows it.
type member struct {
	k       *olmplay.Cluster
	o       *olmplay.Operator
	pkg     string
	version int    // installed: 1.0.<version>
	pending string // the plan that would move it on, "" when none
	target  int    // the version the pending plan installs
	next    int    // the next version to offer
	deleted bool   // the Subscription is deleted
}

func ver(n int) string { return "1.0." + strconv.Itoa(n) }

// world is the churn: the members, the random source, and what happened.
type world struct {
	t        *testing.T
	ctx      context.Context
	c        client.Client
	rng      *rand.Rand
	clusters []*olmplay.Cluster
	members  []*member
	planSeq  int
	variant  string
	expiry   time.Time // the latest override expiry
	done     map[string]int
	skipped  map[string]int
}

func envInt(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	if s := os.Getenv(name); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, name)
		return n
	}
	return def
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	if s := os.Getenv(name); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, name)
		return d
	}
	return def
}

// TestSoak churns a real API server under the running manager and checks, with an
// independent recorder, that no plan was approved while the policy in force denied it and
// that every plan the final state allows is approved. See doc.go.
func TestSoak(t *testing.T) {
	seed := envInt(t, "TOLLGATE_SOAK_SEED", uint64(time.Now().UnixNano()))
	ops := int(envInt(t, "TOLLGATE_SOAK_OPS", defaultOps))
	grace := envDuration(t, "TOLLGATE_SOAK_GRACE", defaultGrace)
	policyGrace := envDuration(t, "TOLLGATE_SOAK_POLICY_GRACE", defaultPolicyGrace)
	replay := fmt.Sprintf("TOLLGATE_SOAK_SEED=%d TOLLGATE_SOAK_OPS=%d go test -run TestSoak -v ./test/soak/", seed, ops)
	t.Logf("seed %d, %d operations, grace %s, policy grace %s; replay: %s", seed, ops, grace, policyGrace, replay)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d; replay: %s", seed, replay)
		}
	})

	ctx := context.Background()
	watching, stopRecorder := context.WithCancel(ctx)
	defer stopRecorder()
	rec, err := startRecorder(watching)
	require.NoError(t, err)

	w := newWorld(t, seed)
	start := time.Now()
	for i := range ops {
		w.step(i)
		time.Sleep(time.Duration(w.rng.IntN(120)) * time.Millisecond)
	}
	churn := time.Since(start)
	w.finish()
	t.Logf("churn: %s; operations done %v; skipped (nothing to do, or the plan not approved yet) %v", churn.Round(time.Millisecond), w.done, w.skipped)

	// Let the last override expire, then every plan the final state allows must be approved.
	time.Sleep(time.Until(w.expiry.Add(1500 * time.Millisecond)))
	timeline, err := rec.policyTimeline(ctx, engine.Options{Timeout: time.Minute})
	require.NoError(t, err)
	c := &checker{rec: rec, timeline: timeline, grace: grace, policyGrace: policyGrace}
	approved, denied := settle(ctx, t, c)
	t.Logf("after the churn: of the plans waiting in RequiresApproval, %d approved (none allowed left unapproved after %s), %d denied and unapproved", approved, settleBound, denied)

	require.Eventually(t, func() bool { return rec.consistent(ctx, env.Client) == nil }, 20*time.Second, 200*time.Millisecond,
		"the recorder's log does not match the API server: %v", rec.consistent(ctx, env.Client))
	stopRecorder()
	rec.wg.Wait()
	require.NoError(t, rec.errors(), "the recorder's log has a gap")

	checkAll(ctx, t, c, seed)
}

// settle waits, up to settleBound, until no plan the latest recorded state allows is left
// unapproved. It returns how many plans waiting in RequiresApproval at the end were approved
// and how many the final state denies.
func settle(ctx context.Context, t *testing.T, c *checker) (approved, denied int) {
	t.Helper()
	deadline := time.Now().Add(settleBound)
	for {
		rv := c.rec.latestRV()
		var waiting, held []string
		approved = 0
		for _, obj := range c.rec.stateAt(rv, soakNamespaces...) {
			p, ok := obj.(*v1alpha1.InstallPlan)
			if !ok || p.Status == nil || p.Status.Phase != v1alpha1.InstallPlanPhaseRequiresApproval {
				continue
			}
			if p.Spec.Approved {
				approved++
				continue
			}
			key := objKey{kindInstallPlan, p.Namespace, p.Name}
			j, err := c.judge(ctx, key, rv, time.Now())
			require.NoError(t, err)
			if j.approvable() {
				waiting = append(waiting, key.String()+"\n"+j.describe())
			} else {
				held = append(held, fmt.Sprintf("%s: %s", key, j.verdict.WhyNot()))
			}
		}
		if len(waiting) == 0 {
			for _, h := range held {
				t.Logf("denied at the end: %s", h)
			}
			return approved, len(held)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d plans the final state allows were not approved within %s:\n%s", len(waiting), settleBound, strings.Join(waiting, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkAll judges every recorded approval and fails the test on a violation.
func checkAll(ctx context.Context, t *testing.T, c *checker, seed uint64) {
	t.Helper()
	approvals := slices.Clone(c.rec.approvals)
	slices.SortFunc(approvals, func(a, b approvalRec) int { return cmp.Compare(a.rv, b.rv) })
	var clean, races, violations int
	var lags []time.Duration
	for _, a := range approvals {
		f, err := c.checkApproval(ctx, a)
		require.NoError(t, err)
		switch {
		case f.clean:
			clean++
		case f.race:
			races++
			lags = append(lags, max(f.stateAge, f.policyAge))
			t.Logf("race (not a violation): %s approved at resourceVersion %d; allowed by the state as of resourceVersion %d (superseded %s before, as the watches delivered it, by %s) under the policy as of resourceVersion %d (superseded %s before)",
				a.key, a.rv, f.allowedBy.rv, f.stateAge.Round(time.Millisecond), cmp.Or(f.superseded, "nothing"), f.allowedBy.policy.rv, f.policyAge.Round(time.Millisecond))
		default:
			violations++
			t.Errorf("VIOLATION (seed %d): %s (uid %s) approved at resourceVersion %d (%s), but no state in force within the %s before it under a policy in force within the %s before it allowed it.\nThe state just before the approval:\n%s",
				seed, a.key, a.uid, a.rv, a.at.UTC().Format(time.RFC3339Nano), c.grace, c.policyGrace, f.before.describe())
		}
	}
	slices.Sort(lags)
	t.Logf("approvals checked: %d (clean %d, races within the grace window %d, violations %d); offline evaluations %d; policy versions %d; race lags %v",
		len(approvals), clean, races, violations, c.evals, len(c.timeline), lags)
}

func newWorld(t *testing.T, seed uint64) *world {
	t.Helper()
	w := &world{t: t, ctx: context.Background(), c: env.Client, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)),
		variant: "absent", done: map[string]int{}, skipped: map[string]int{}}
	for _, ns := range soakNamespaces {
		k := olmplay.NewNamedCluster(t, env.Client, ns)
		w.clusters = append(w.clusters, k)
		for _, pkg := range soakPackages {
			o := k.Install(pkg, ver(0), v1alpha1.ApprovalManual)
			w.members = append(w.members, &member{k: k, o: o, pkg: pkg, next: 1})
		}
	}
	w.clusters[0].Catalog(globalNS, "global", "READY")
	return w
}

// operation is one kind of churn, with its weight.
type operation struct {
	name   string
	weight int
	do     func(w *world) bool // false: nothing to do
}

var operations = []operation{
	{"flip-upgradeable", 22, (*world).flip},
	{"offer-upgrade", 14, (*world).offer},
	{"offer-bundle", 6, (*world).bundle},
	{"complete-plan", 12, (*world).complete},
	{"replace-plan", 3, (*world).replacePlan},
	{"add-override", 9, (*world).addOverride},
	{"remove-overrides", 4, (*world).removeOverrides},
	{"flip-catalog", 9, (*world).flipCatalog},
	{"swap-policy", 7, (*world).swapPolicy},
	{"delete-subscription", 3, (*world).deleteSubscription},
	{"recreate-subscription", 4, (*world).recreateSubscription},
	{"recreate-condition", 2, (*world).recreateCondition},
}

// step draws and plays one operation.
func (w *world) step(int) {
	total := 0
	for _, op := range operations {
		total += op.weight
	}
	n := w.rng.IntN(total)
	for _, op := range operations {
		if n < op.weight {
			if op.do(w) {
				w.done[op.name]++
			} else {
				w.skipped[op.name]++
			}
			return
		}
		n -= op.weight
	}
}

// pick is a random member that satisfies ok, or nil.
func (w *world) pick(ok func(*member) bool) *member {
	var c []*member
	for _, m := range w.members {
		if ok(m) {
			c = append(c, m)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[w.rng.IntN(len(c))]
}

func (w *world) flip() bool {
	m := w.members[w.rng.IntN(len(w.members))]
	status := metav1.ConditionTrue
	if w.rng.IntN(3) == 0 { // a third False: plans get through often enough to be judged
		status = metav1.ConditionFalse
	}
	m.o.Report("Upgradeable", status, "soak says "+string(status))
	return true
}

func (w *world) offer() bool {
	m := w.pick(func(m *member) bool { return m.pending == "" && !m.deleted })
	if m == nil {
		return false
	}
	plan := m.o.OfferUpgrade(ver(m.next))
	m.pending, m.target, m.next = plan.Name, m.next, m.next+1
	return true
}

func (w *world) bundle() bool {
	a := w.pick(func(m *member) bool { return m.pending == "" && !m.deleted })
	if a == nil {
		return false
	}
	b := w.pick(func(m *member) bool { return m != a && m.k == a.k && m.pending == "" && !m.deleted })
	if b == nil {
		return false
	}
	v := max(a.next, b.next)
	w.planSeq++
	plan := a.k.Plan(fmt.Sprintf("bundle-%d", w.planSeq), []*olmplay.Operator{a.o, b.o}, ver(v))
	for _, m := range []*member{a, b} {
		m.pending, m.target, m.next = plan.Name, v, v+1
	}
	return true
}

// complete plays OLM installing an approved plan: the plan goes Installing then Complete, each
// of its CSVs is created Succeeded with its OperatorCondition, the Subscriptions move on, and
// the replaced CSVs and their OperatorConditions go.
func (w *world) complete() bool {
	m := w.pick(func(m *member) bool { return m.pending != "" })
	return m != nil && w.completePlan(m)
}

// completePlan completes m's pending plan if it is approved; false when it is not.
func (w *world) completePlan(m *member) bool {
	plan := &v1alpha1.InstallPlan{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: m.k.NS, Name: m.pending}, plan); err != nil || !plan.Spec.Approved {
		return false
	}
	for _, phase := range []v1alpha1.InstallPlanPhase{v1alpha1.InstallPlanPhaseInstalling, v1alpha1.InstallPlanPhaseComplete} {
		w.retry(plan, func() { plan.Status.Phase = phase }, true)
	}
	for _, peer := range w.members {
		if peer.k != m.k || peer.pending != plan.Name {
			continue
		}
		old := olmplay.CSVName(peer.pkg, ver(peer.version))
		csv := peer.k.CSV(peer.pkg, ver(peer.target), v1alpha1.CSVPhaseSucceeded)
		peer.k.Create(&operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: peer.k.NS, Name: csv.Name}})
		peer.version, peer.pending = peer.target, ""
		if !peer.deleted {
			peer.o.SetStatus(func(s *v1alpha1.SubscriptionStatus) {
				s.InstalledCSV, s.CurrentCSV, s.State = csv.Name, csv.Name, v1alpha1.SubscriptionStateAtLatest
			})
		} else {
			peer.o.Sub.Status.InstalledCSV = csv.Name // what Report reads
		}
		w.delete(&v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: peer.k.NS, Name: old}})
		w.delete(&operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: peer.k.NS, Name: old}})
	}
	return true
}

// replacePlan plays OLM resolving again: a single operator's pending plan is deleted and a new
// one offers the next version.
func (w *world) replacePlan() bool {
	m := w.pick(func(m *member) bool { return m.pending != "" && !m.deleted && !strings.HasPrefix(m.pending, "bundle-") })
	if m == nil {
		return false
	}
	w.delete(&v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: m.k.NS, Name: m.pending}})
	plan := m.o.OfferUpgrade(ver(m.next))
	m.pending, m.target, m.next = plan.Name, m.next, m.next+1
	return true
}

func (w *world) gate(m *member) *tollgatev1alpha1.UpgradeGate {
	gate := &tollgatev1alpha1.UpgradeGate{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: m.k.NS, Name: m.pkg}, gate); err != nil {
		return nil
	}
	return gate
}

func (w *world) addOverride() bool {
	m := w.pick(func(m *member) bool { return !m.deleted })
	code := overrideCodes[w.rng.IntN(len(overrideCodes))]
	expires := metav1.NewTime(time.Now().Add(time.Duration(2+w.rng.IntN(5)) * time.Second).Truncate(time.Second))
	if m == nil {
		return false
	}
	gate := w.gate(m)
	if gate == nil {
		return false
	}
	if !w.retry(gate, func() {
		// One override per code: a new one replaces the old.
		gate.Spec.Overrides = slices.DeleteFunc(gate.Spec.Overrides, func(o tollgatev1alpha1.Override) bool { return o.Code == code })
		gate.Spec.Overrides = append(gate.Spec.Overrides, tollgatev1alpha1.Override{Code: code, Reason: "soak", Expires: &expires})
	}, false) {
		return false
	}
	if expires.After(w.expiry) {
		w.expiry = expires.Time
	}
	return true
}

func (w *world) removeOverrides() bool {
	m := w.pick(func(m *member) bool { return !m.deleted })
	if m == nil {
		return false
	}
	gate := w.gate(m)
	if gate == nil || len(gate.Spec.Overrides) == 0 {
		return false
	}
	return w.retry(gate, func() { gate.Spec.Overrides = nil }, false)
}

func (w *world) flipCatalog() bool {
	state := "READY"
	if w.rng.IntN(3) == 0 {
		state = "TRANSIENT_FAILURE"
	}
	i := w.rng.IntN(len(w.clusters) + 1)
	if i == len(w.clusters) {
		w.clusters[0].Catalog(globalNS, "global", state)
	} else {
		w.clusters[i].Catalog(w.clusters[i].NS, "catalog", state)
	}
	return true
}

func (w *world) swapPolicy() bool {
	names := slices.Sorted(maps.Keys(policyVariants))
	variant := names[w.rng.IntN(len(names))]
	if variant == w.variant {
		return false
	}
	w.variant = variant
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: sitePolicy}}
	if variant == "absent" {
		w.delete(cm)
		return true
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := w.c.Get(w.ctx, client.ObjectKeyFromObject(cm), cm)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: sitePolicy,
				Labels: map[string]string{policysource.Label: policysource.KindRego}, Annotations: map[string]string{variantAnnotation: variant}},
				Data: map[string]string{"site.rego": policyVariants[variant]}}
			return w.c.Create(w.ctx, cm)
		}
		if err != nil {
			return err
		}
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[variantAnnotation] = variant
		cm.Data = map[string]string{"site.rego": policyVariants[variant]}
		return w.c.Update(w.ctx, cm)
	})
	require.NoError(w.t, err, "swap the site policy to %s", variant)
	return true
}

func (w *world) deleteSubscription() bool {
	m := w.pick(func(m *member) bool { return !m.deleted })
	if m == nil {
		return false
	}
	w.delete(&v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: m.k.NS, Name: m.pkg}})
	m.deleted = true
	return true
}

// recreateSubscription plays an admin re-creating a deleted Subscription and OLM filling its
// status in: the installed CSV, and the pending plan if there is one.
func (w *world) recreateSubscription() bool {
	m := w.pick(func(m *member) bool { return m.deleted })
	if m == nil {
		return false
	}
	w.recreate(m)
	return true
}

func (w *world) recreate(m *member) {
	installed := olmplay.CSVName(m.pkg, ver(m.version))
	m.o = m.k.Subscribe(m.pkg, v1alpha1.ApprovalManual)
	m.deleted = false
	m.o.SetStatus(func(s *v1alpha1.SubscriptionStatus) {
		s.InstalledCSV, s.CurrentCSV, s.State = installed, installed, v1alpha1.SubscriptionStateAtLatest
		if m.pending != "" {
			s.CurrentCSV, s.State = olmplay.CSVName(m.pkg, ver(m.target)), v1alpha1.SubscriptionStateUpgradePending
			s.InstallPlanRef = &corev1.ObjectReference{Kind: "InstallPlan", Namespace: m.k.NS, Name: m.pending, APIVersion: "operators.coreos.com/v1alpha1"}
		}
	})
}

// recreateCondition plays OLM re-creating an installed CSV's OperatorCondition (its
// conditions gone).
func (w *world) recreateCondition() bool {
	m := w.members[w.rng.IntN(len(w.members))]
	oc := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: m.k.NS, Name: olmplay.CSVName(m.pkg, ver(m.version))}}
	w.delete(oc)
	require.Eventually(w.t, func() bool {
		return apierrors.IsNotFound(w.c.Get(w.ctx, client.ObjectKeyFromObject(oc), &operatorsv2.OperatorCondition{}))
	}, olmplay.Wait, olmplay.Tick)
	m.k.Create(&operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: m.k.NS, Name: oc.Name}})
	return true
}

// finish ends the churn: approved plans complete, deleted Subscriptions come back, the
// catalogs are healthy again, and every operator without a pending plan is offered an
// upgrade, so the final state has a plan for each, allowed or not (Upgradeable, the site
// policy).
func (w *world) finish() {
	for _, k := range w.clusters {
		k.Catalog(k.NS, "catalog", "READY")
	}
	w.clusters[0].Catalog(globalNS, "global", "READY")
	for _, m := range w.members {
		if m.pending != "" {
			w.completePlan(m)
		}
		if m.deleted {
			w.recreate(m)
		}
		if m.pending == "" {
			plan := m.o.OfferUpgrade(ver(m.next))
			m.pending, m.target, m.next = plan.Name, m.next, m.next+1
		}
	}
}

func (w *world) delete(obj client.Object) {
	w.t.Helper()
	require.NoError(w.t, client.IgnoreNotFound(w.c.Delete(w.ctx, obj)), "delete %T %s", obj, obj.GetName())
}

// retry applies change to obj and writes it (its status when status is set), reading it
// again after each conflict. It says false when obj is gone (a gate the manager deleted
// with its Subscription).
func (w *world) retry(obj client.Object, change func(), status bool) bool {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.c.Get(w.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		if status {
			return w.c.Status().Update(w.ctx, obj)
		}
		return w.c.Update(w.ctx, obj)
	})
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(w.t, err, "write %T %s", obj, obj.GetName())
	return true
}
