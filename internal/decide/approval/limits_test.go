package approval_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
)

// counting is an Evaluator that counts its evaluations and allows every Subscription.
type counting struct {
	n    atomic.Int64
	next approval.Evaluator // nil: allow
}

func (c *counting) Evaluate(ctx context.Context, input map[string]any) *engine.Result {
	c.n.Add(1)
	if c.next != nil {
		return c.next.Evaluate(ctx, input)
	}
	return &engine.Result{Decision: allowed()}
}

// decideMeasured decides the Subscription name and logs how long it took, what it allocated
// and how many evaluations it made.
func decideMeasured(t *testing.T, d *approval.Decider, c *counting, name string) *approval.Decision {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.n.Store(0)
	start := time.Now()
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: ns, Name: name})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.NotNil(t, dec)
	t.Logf("deciding %s took %v, allocated %.1f MiB and made %d evaluations", name, took, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), c.n.Load())
	return dec
}

// A thousand pending plans for one Subscription: each is judged on its own move, and the
// Subscription's decision is evaluated once, however many plans need it.
func TestLimitsAThousandPendingPlans(t *testing.T) {
	const plans = 1000
	objs := []client.Object{subscription("a", "a.v2", manual), gate("a", enforce, true)}
	for i := range plans {
		objs = append(objs, plan(fmt.Sprintf("install-%04d", i), manual, false, waiting, "a.v2"))
	}
	c := &counting{}
	d := &approval.Decider{Reader: world(t, objs...), Policies: c}
	dec := decideMeasured(t, d, c, "a")
	require.Len(t, dec.Plans, plans)
	for _, v := range dec.Plans {
		assert.True(t, v.Approvable, v.WhyNot())
	}
	assert.EqualValues(t, 1+plans, c.n.Load(), "one evaluation for the Subscription, and one for each plan's move")
}

// An ordinary upgrade, a plan the Subscription references that moves it to the CSV it waits
// on, is evaluated once: the move the plan makes is the one the Subscription's document
// carries, and the same document is not evaluated again for the verdict.
func TestLimitsAnOrdinaryUpgradeIsEvaluatedOnce(t *testing.T) {
	sub := subscription("a", "a.v2", manual)
	sub.Status.InstallPlanRef = &corev1.ObjectReference{Namespace: ns, Name: "install-a"}
	c := &counting{}
	d := &approval.Decider{Reader: world(t, sub, gate("a", enforce, true), plan("install-a", manual, false, waiting, "a.v2")), Policies: c}
	dec := decideMeasured(t, d, c, "a")
	require.Len(t, dec.Plans, 1)
	assert.True(t, dec.Plans[0].Approvable, dec.Plans[0].WhyNot())
	assert.EqualValues(t, 1, c.n.Load(), "the Subscription's document judges the plan's move")
}

// bundle is n Manual Subscriptions with Enforce gates whose CSVs one pending plan installs.
func bundle(t *testing.T, n int) client.Reader {
	t.Helper()
	var csvs []string
	var objs []client.Object
	for i := range n {
		name := fmt.Sprintf("op-%03d", i)
		csvs = append(csvs, name+".v2")
		objs = append(objs, subscription(name, name+".v2", manual), gate(name, enforce, true))
	}
	return world(t, append(objs, plan("install-bundle", manual, false, waiting, csvs...))...)
}

// A plan bundling MaxBundle operators is judged: every member's own decision (for the peers)
// and its move (for the verdict) once, and the Subscription's full decision once: 2N+1.
func TestLimitsABundleAtTheCapIsJudged(t *testing.T) {
	const n = approval.MaxBundle
	c := &counting{}
	d := &approval.Decider{Reader: bundle(t, n), Policies: c}
	dec := decideMeasured(t, d, c, "op-000")
	require.Len(t, dec.Plans, 1)
	assert.True(t, dec.Plans[0].Approvable, dec.Plans[0].WhyNot())
	assert.Len(t, dec.Peers, n-1)
	assert.EqualValues(t, 2*n+1, c.n.Load(), "each member evaluated once without its companions and once on its move")
}

// A plan bundling 200 operators is held without judging its members (each judgement would
// evaluate a member with 199 peers: quadratic): the Subscription's own decision still sees its
// peers' own decisions, N evaluations in all, and the verdict says why the plan is held.
func TestLimitsABundleOfTwoHundredOperatorsIsHeld(t *testing.T) {
	const n = 200
	c := &counting{}
	d := &approval.Decider{Reader: bundle(t, n), Policies: c}
	dec := decideMeasured(t, d, c, "op-000")
	require.Len(t, dec.Plans, 1)
	v := dec.Plans[0]
	assert.False(t, v.Approvable)
	assert.Equal(t, []approval.Blocker{{Reason: approval.BlockTooManyOperators}}, v.Blockers)
	assert.Contains(t, v.WhyNot(), fmt.Sprintf("more than %d operators", approval.MaxBundle))
	assert.Contains(t, v.WhyNot(), "approve it by hand")
	assert.True(t, dec.Result.Decision.Allowed, "the Subscription's own decision is not changed")
	assert.Len(t, dec.Peers, n-1)
	assert.EqualValues(t, n, c.n.Load(), "its own decision with peers, and each peer's own: linear")

	c.n.Store(0)
	judged, err := d.Judge(context.Background(), &dec.PendingInstallPlans[0])
	require.NoError(t, err)
	assert.Equal(t, v, judged)
	assert.Zero(t, c.n.Load(), "judging the plan alone evaluates nothing")
}

// The same bundle under the embedded policies: the cost of one Decide, logged. The members
// are not allowed by the policies (they have no CSVs), and the plan is held either way.
func TestLimitsABundleUnderTheEmbeddedPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("200 evaluations")
	}
	const n = 200
	e, err := engine.New(context.Background(), engine.Options{})
	require.NoError(t, err)
	c := &counting{next: e}
	d := &approval.Decider{Reader: bundle(t, n), Policies: c}
	dec := decideMeasured(t, d, c, "op-000")
	require.Len(t, dec.Plans, 1)
	assert.False(t, dec.Plans[0].Approvable)
	assert.EqualValues(t, n, c.n.Load())
	assert.False(t, dec.Result.Decision.Allowed)
	assert.LessOrEqual(t, len(dec.Result.Decision.Denials), engine.MaxDenials, "199 peer denials are capped")
}
