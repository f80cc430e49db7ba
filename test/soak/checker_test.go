package soak

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// The kinds the checker records: everything a decision reads, and the policy ConfigMaps.
const (
	kindSubscription = "Subscription"
	kindInstallPlan  = "InstallPlan"
	kindCSV          = "ClusterServiceVersion"
	kindCatalog      = "CatalogSource"
	kindGroup        = "OperatorGroup"
	kindCondition    = "OperatorCondition"
	kindGate         = "UpgradeGate"
	kindConfigMap    = "ConfigMap"
)

// objKey names one object of a kind.
type objKey struct{ kind, ns, name string }

func (k objKey) String() string { return k.kind + " " + k.ns + "/" + k.name }

// version is one committed version of an object: its resourceVersion (etcd's global
// revision), when the checker's watch delivered it, and the object (nil: deleted).
type version struct {
	rv  uint64
	at  time.Time
	obj client.Object
}

// approvalRec is one plan (by UID) seen approved for the first time.
type approvalRec struct {
	key  objKey
	uid  types.UID
	rv   uint64
	at   time.Time
	plan *v1alpha1.InstallPlan
}

// recorder keeps every version of every recorded object, from its own watches on the API
// server: no informer, no cache shared with the manager.
type recorder struct {
	mu        sync.Mutex
	log       map[objKey][]version
	approvals []approvalRec
	approved  map[types.UID]bool
	errs      []error
	wg        sync.WaitGroup
}

// watched is one kind the recorder watches.
type watched struct {
	kind string
	list func() client.ObjectList
	opts []client.ListOption
}

func watchedKinds() []watched {
	return []watched{
		{kindSubscription, func() client.ObjectList { return &v1alpha1.SubscriptionList{} }, nil},
		{kindInstallPlan, func() client.ObjectList { return &v1alpha1.InstallPlanList{} }, nil},
		{kindCSV, func() client.ObjectList { return &v1alpha1.ClusterServiceVersionList{} }, nil},
		{kindCatalog, func() client.ObjectList { return &v1alpha1.CatalogSourceList{} }, nil},
		{kindGroup, func() client.ObjectList { return &operatorsv1.OperatorGroupList{} }, nil},
		{kindCondition, func() client.ObjectList { return &operatorsv2.OperatorConditionList{} }, nil},
		{kindGate, func() client.ObjectList { return &tollgatev1alpha1.UpgradeGateList{} }, nil},
		{kindConfigMap, func() client.ObjectList { return &corev1.ConfigMapList{} }, []client.ListOption{client.InNamespace(policyNS)}},
	}
}

// startRecorder watches every recorded kind until ctx ends. Each watch starts with the
// objects that exist (synthetic ADDED events) and resumes from its last resourceVersion when
// the API server closes it.
func startRecorder(ctx context.Context) (*recorder, error) {
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return nil, err
	}
	r := &recorder{log: map[objKey][]version{}, approved: map[types.UID]bool{}}
	for _, w := range watchedKinds() {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.watch(ctx, c, w)
		}()
	}
	return r, nil
}

func (r *recorder) watch(ctx context.Context, c client.WithWatch, w watched) {
	rv := ""
	for ctx.Err() == nil {
		opts := append(slices.Clone(w.opts), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		wi, err := c.Watch(ctx, w.list(), opts...)
		if err != nil {
			if ctx.Err() == nil {
				r.fail(fmt.Errorf("watch %s: %w", w.kind, err))
			}
			return
		}
		for ev := range wi.ResultChan() {
			switch ev.Type {
			case watch.Bookmark:
				continue
			case watch.Error:
				if ctx.Err() != nil { // the recorder is stopping
					wi.Stop()
					return
				}
				r.fail(fmt.Errorf("watch %s: %w", w.kind, apierrors.FromObject(ev.Object)))
				wi.Stop()
				return
			}
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			rv = obj.GetResourceVersion()
			r.record(w.kind, ev.Type == watch.Deleted, obj)
		}
		wi.Stop()
	}
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *recorder) record(kind string, deleted bool, obj client.Object) {
	at := time.Now()
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		r.fail(fmt.Errorf("%s %s: resourceVersion %q: %w", kind, obj.GetName(), obj.GetResourceVersion(), err))
		return
	}
	if _, err := input.Trim(obj); err != nil {
		r.fail(err)
		return
	}
	key := objKey{kind, obj.GetNamespace(), obj.GetName()}
	v := version{rv: rv, at: at, obj: obj}
	if deleted {
		v.obj = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log[key] = append(r.log[key], v)
	if plan, ok := obj.(*v1alpha1.InstallPlan); ok && !deleted && plan.Spec.Approved && !r.approved[plan.UID] {
		r.approved[plan.UID] = true
		r.approvals = append(r.approvals, approvalRec{key: key, uid: plan.UID, rv: rv, at: at, plan: plan})
	}
}

// errors are the recorder's failures: a log with a gap cannot judge anything.
func (r *recorder) errors() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// latestRV is the highest resourceVersion recorded.
func (r *recorder) latestRV() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var top uint64
	for _, vs := range r.log {
		top = max(top, vs[len(vs)-1].rv)
	}
	return top
}

// at is the version of the object key in force at rv (the last with a resourceVersion ≤ rv),
// nil when it did not exist. The caller holds mu.
func (r *recorder) at(key objKey, rv uint64) client.Object {
	vs := r.log[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rv > rv })
	if i == 0 {
		return nil
	}
	return vs[i-1].obj
}

// stateAt is every recorded object (ConfigMaps aside) of the namespaces as of rv.
func (r *recorder) stateAt(rv uint64, namespaces ...string) []client.Object {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []client.Object
	for key := range r.log {
		if key.kind == kindConfigMap || !slices.Contains(namespaces, key.ns) {
			continue
		}
		if obj := r.at(key, rv); obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

// changesBetween are the resourceVersions, and when they were seen, of the changes to
// objects of the namespaces and to the policy ConfigMaps with from ≤ rv < to.
func (r *recorder) changesBetween(from, to uint64, namespaces ...string) []version {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []version
	for key, vs := range r.log {
		if key.kind != kindConfigMap && !slices.Contains(namespaces, key.ns) {
			continue
		}
		for _, v := range vs {
			if v.rv >= from && v.rv < to {
				out = append(out, version{rv: v.rv, at: v.at})
			}
		}
	}
	slices.SortFunc(out, func(a, b version) int { return cmp.Compare(a.rv, b.rv) })
	return slices.CompactFunc(out, func(a, b version) bool { return a.rv == b.rv })
}

// changed names the objects changed at rv.
func (r *recorder) changed(rv uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var keys []string
	for key, vs := range r.log {
		for _, v := range vs {
			if v.rv == rv {
				what := key.String()
				if v.obj == nil {
					what += " (deleted)"
				}
				keys = append(keys, what)
			}
		}
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// lastBefore is the highest resourceVersion of a change to the namespaces or the policy
// ConfigMaps seen before t (0 when none).
func (r *recorder) lastBefore(t time.Time, namespaces ...string) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var top uint64
	for key, vs := range r.log {
		if key.kind != kindConfigMap && !slices.Contains(namespaces, key.ns) {
			continue
		}
		for _, v := range vs {
			if v.at.Before(t) {
				top = max(top, v.rv)
			}
		}
	}
	return top
}

// consistent compares the log's latest versions with a fresh list of every recorded kind:
// the same objects at the same resourceVersions. Anything else means the log missed or has
// not yet received a change.
func (r *recorder) consistent(ctx context.Context, c client.Client) error {
	for _, w := range watchedKinds() {
		list := w.list()
		if err := c.List(ctx, list, w.opts...); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		live := map[objKey]string{}
		for _, it := range items {
			o := it.(client.Object)
			live[objKey{w.kind, o.GetNamespace(), o.GetName()}] = o.GetResourceVersion()
		}
		r.mu.Lock()
		logged := map[objKey]string{}
		for key, vs := range r.log {
			if last := vs[len(vs)-1]; key.kind == w.kind && last.obj != nil {
				logged[key] = strconv.FormatUint(last.rv, 10)
			}
		}
		r.mu.Unlock()
		if !maps.Equal(live, logged) {
			return fmt.Errorf("the log of %s is behind the API server (%d live objects, %d logged)", w.kind, len(live), len(logged))
		}
	}
	return nil
}

// policyAt is one step of the policy timeline: from rv on, engine is in force.
type policyAt struct {
	rv      uint64
	at      time.Time // when the change was delivered
	engine  *engine.Engine
	summary string // which ConfigMap versions were read, and what was served
}

// policyTimeline replays the policy ConfigMaps' changes in resourceVersion order through
// policysource.Resolve, as the manager's policy reconciler does: a ConfigMap that does not
// compile keeps its last good version (or stays out), and when nothing compiles the set in
// service stays. Only changes of labels or data count (the manager ignores its own status
// annotations).
func (r *recorder) policyTimeline(ctx context.Context, base engine.Options) ([]policyAt, error) {
	r.mu.Lock()
	type cmVersion struct {
		name string
		version
	}
	var changes []cmVersion
	for key, vs := range r.log {
		if key.kind == kindConfigMap {
			for _, v := range vs {
				changes = append(changes, cmVersion{key.name, v})
			}
		}
	}
	r.mu.Unlock()
	slices.SortFunc(changes, func(a, b cmVersion) int { return cmp.Compare(a.rv, b.rv) })

	first, err := policysource.Resolve(ctx, base, nil, policysource.Versions{})
	if err != nil {
		return nil, fmt.Errorf("the base policies: %w", err)
	}
	if first.Engine == nil {
		return nil, errors.New("the base policies do not compile")
	}
	timeline := []policyAt{{rv: 0, engine: first.Engine, summary: "embedded policies only"}}
	last := first.Served
	current := map[string]corev1.ConfigMap{}
	for _, ch := range changes {
		cm, _ := ch.obj.(*corev1.ConfigMap)
		prev, had := current[ch.name]
		labelled := false
		if cm != nil {
			_, labelled = cm.Labels[policysource.Label]
		}
		switch {
		case !labelled:
			if !had {
				continue
			}
			delete(current, ch.name)
		case had && equality.Semantic.DeepEqual(prev.Data, cm.Data) && equality.Semantic.DeepEqual(prev.BinaryData, cm.BinaryData) &&
			equality.Semantic.DeepEqual(prev.Labels, cm.Labels):
			continue
		default:
			current[ch.name] = *cm
		}
		cms := slices.SortedFunc(maps.Values(current), func(a, b corev1.ConfigMap) int { return cmp.Compare(a.Name, b.Name) })
		res, err := policysource.Resolve(ctx, base, cms, last)
		if err != nil {
			return nil, fmt.Errorf("resolve the policy at resourceVersion %d: %w", ch.rv, err)
		}
		step := policyAt{rv: ch.rv, at: ch.at, engine: timeline[len(timeline)-1].engine, summary: describePolicy(cms, res)}
		if res.Engine != nil {
			last, step.engine = res.Served, res.Engine
		}
		timeline = append(timeline, step)
	}
	return timeline, nil
}

func describePolicy(cms []corev1.ConfigMap, res *policysource.Resolution) string {
	var parts []string
	for _, cm := range cms {
		st := res.Sources[cm.Name]
		parts = append(parts, fmt.Sprintf("%s@%s=%s(serving %s)", cm.Name, cm.ResourceVersion, variantOf(&cm), cmp.Or(st.Serving, policysource.ServingCurrent)))
	}
	if len(parts) == 0 {
		return "no policy ConfigMap"
	}
	if res.Engine == nil {
		parts = append(parts, "nothing compiles: the set in service stays")
	}
	return strings.Join(parts, ", ")
}

// variantOf names the soak's policy variant a ConfigMap holds.
func variantOf(cm *corev1.ConfigMap) string {
	if v := cm.Annotations[variantAnnotation]; v != "" {
		return v
	}
	return "?"
}

func engineAt(timeline []policyAt, rv uint64) policyAt {
	i := sort.Search(len(timeline), func(i int) bool { return timeline[i].rv > rv })
	return timeline[max(i-1, 0)]
}

// checker judges, offline, the recorded approvals against the recorded states.
type checker struct {
	rec      *recorder
	timeline []policyAt
	// grace is how far back the states the manager may have decided on go; policyGrace the
	// same for the policy set in service, which lags its ConfigMaps by a compile.
	grace, policyGrace time.Duration
	evals              int
}

// notOperands is the manager's operand check on this cluster: no CRD serves an operand kind
// (the soak installs none), so no owned kind is read.
type notOperands struct{}

func (notOperands) Check(_ context.Context, k input.OwnedKind) (input.OwnedKind, error) {
	return k, fmt.Errorf("%w: no CustomResourceDefinition %s", input.ErrNotOperand, k.CRD)
}

// judgement is the verdict on one plan in the state as of one resourceVersion.
type judgement struct {
	rv      uint64
	now     time.Time
	policy  policyAt
	verdict approval.Verdict
	state   []client.Object
	absent  bool // the plan did not exist
}

// judge evaluates the plan key in the state as of rv (every recorded object of its namespace
// and the global catalog namespace, the policy in force), at the instant now.
func (c *checker) judge(ctx context.Context, key objKey, rv uint64, now time.Time) (judgement, error) {
	return c.judgeWith(ctx, key, rv, engineAt(c.timeline, rv), nil, now)
}

// judgeWith evaluates the plan key in the state as of rv under the policy pol, with the plan
// itself replaced by pin when pin is set.
func (c *checker) judgeWith(ctx context.Context, key objKey, rv uint64, pol policyAt, pin *v1alpha1.InstallPlan, now time.Time) (judgement, error) {
	c.evals++
	j := judgement{rv: rv, now: now, policy: pol, state: c.rec.stateAt(rv, key.ns, globalNS)}
	isPlan := func(o client.Object) bool {
		p, ok := o.(*v1alpha1.InstallPlan)
		return ok && p.Namespace == key.ns && p.Name == key.name
	}
	if pin != nil {
		j.state = append(slices.DeleteFunc(j.state, isPlan), pin)
	}
	snap := snapshot.New()
	var plan *v1alpha1.InstallPlan
	for _, obj := range j.state {
		if err := snap.Upsert(obj.DeepCopyObject().(client.Object)); err != nil {
			return j, err
		}
		if isPlan(obj) {
			plan = obj.(*v1alpha1.InstallPlan)
		}
	}
	if plan == nil {
		j.absent = true
		return j, nil
	}
	d := &approval.Decider{Reader: snap, Policies: pol.engine, Input: input.Config{OperandKinds: notOperands{}},
		Now: func() time.Time { return now }}
	v, err := d.Judge(ctx, plan.DeepCopy())
	j.verdict = v
	return j, err
}

func (j judgement) approvable() bool { return !j.absent && j.verdict.Approvable }

// finding is the outcome of checking one approval.
type finding struct {
	a approvalRec
	// clean: the state just before the approval allowed the plan. race: it did not, but the
	// state and the policy in force at instants within the grace window did (allowedBy).
	// Otherwise a violation.
	clean, race bool
	allowedBy   judgement
	before      judgement // the state just before the approval
	// stateAge and policyAge are how long before the approval the allowing state and policy
	// were superseded (zero: still in force).
	stateAge, policyAge time.Duration
	superseded          string // the change that superseded the allowing state, if any
}

// checkApproval judges one approval: was the plan approvable in the state just before the
// approval's resourceVersion, or else under some state and some policy each in force during
// the grace window before it, the plan being the version the approval was made from?
func (c *checker) checkApproval(ctx context.Context, a approvalRec) (finding, error) {
	f := finding{a: a}
	var err error
	if f.before, err = c.judge(ctx, a.key, a.rv-1, a.at); err != nil {
		return f, err
	}
	if f.before.approvable() {
		f.clean = true
		return f, nil
	}
	c.rec.mu.Lock()
	pin, _ := c.rec.at(a.key, a.rv-1).(*v1alpha1.InstallPlan)
	c.rec.mu.Unlock()
	if pin == nil { // approved at creation: nothing was ever approvable
		return f, nil
	}
	start := a.at.Add(-c.grace)
	r0 := c.rec.lastBefore(start, a.key.ns, globalNS)
	states := c.rec.changesBetween(r0, a.rv, a.key.ns, globalNS)
	if len(states) == 0 || states[0].rv != r0 {
		states = append([]version{{rv: r0, at: start}}, states...)
	}
	// The policies in force within the policy window: the last one delivered before it, and
	// every one delivered since (before the approval).
	pstart := a.at.Add(-c.policyGrace)
	var policies []policyAt
	for _, p := range c.timeline {
		switch {
		case p.rv >= a.rv:
		case p.at.Before(pstart):
			policies = []policyAt{p}
		default:
			policies = append(policies, p)
		}
	}
	// Newest first. Each state is judged at the earliest instant it was in force within the
	// window (overrides only expire), under each policy in force within the window.
	for i := len(states) - 1; i >= 0; i-- {
		now := states[i].at
		if now.Before(start) {
			now = start
		}
		for k := len(policies) - 1; k >= 0; k-- {
			j, err := c.judgeWith(ctx, a.key, states[i].rv, policies[k], pin, now)
			if err != nil {
				return f, err
			}
			if !j.approvable() {
				continue
			}
			f.race, f.allowedBy = true, j
			if i+1 < len(states) {
				f.stateAge, f.superseded = a.at.Sub(states[i+1].at), c.rec.changed(states[i+1].rv)
			}
			if k+1 < len(policies) {
				f.policyAge = a.at.Sub(policies[k+1].at)
			}
			return f, nil
		}
	}
	return f, nil
}

// describe prints a judgement's state: the plan's verdict, the policy, and per Subscription of
// the namespace its status, its installed CSV's Upgradeable condition and its gate's overrides;
// the catalogs.
func (j judgement) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  state as of resourceVersion %d, evaluated at %s\n", j.rv, j.now.UTC().Format(time.RFC3339Nano))
	if j.absent {
		b.WriteString("  the plan did not exist\n")
	} else {
		fmt.Fprintf(&b, "  verdict: approvable=%v %s\n", j.verdict.Approvable, j.verdict.WhyNot())
	}
	fmt.Fprintf(&b, "  policy (from resourceVersion %d): %s\n", j.policy.rv, j.policy.summary)
	byName := map[string]client.Object{}
	for _, o := range j.state {
		byName[fmt.Sprintf("%T/%s/%s", o, o.GetNamespace(), o.GetName())] = o
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if line := describeObject(byName[name], byName); line != "" {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

func describeObject(o client.Object, all map[string]client.Object) string {
	switch o := o.(type) {
	case *v1alpha1.Subscription:
		line := fmt.Sprintf("Subscription %s/%s@%s installed=%s current=%s state=%s", o.Namespace, o.Name, o.ResourceVersion,
			o.Status.InstalledCSV, o.Status.CurrentCSV, o.Status.State)
		if oc, ok := all[fmt.Sprintf("%T/%s/%s", &operatorsv2.OperatorCondition{}, o.Namespace, o.Status.InstalledCSV)].(*operatorsv2.OperatorCondition); ok {
			if c := meta.FindStatusCondition(oc.Status.Conditions, "Upgradeable"); c != nil {
				line += " Upgradeable=" + string(c.Status)
			}
		}
		if g, ok := all[fmt.Sprintf("%T/%s/%s", &tollgatev1alpha1.UpgradeGate{}, o.Namespace, o.Name)].(*tollgatev1alpha1.UpgradeGate); ok {
			for _, ov := range g.Spec.Overrides {
				line += fmt.Sprintf(" override=%s", ov.Code)
				if ov.Expires != nil {
					line += "(expires " + ov.Expires.UTC().Format(time.RFC3339) + ")"
				}
			}
			line += fmt.Sprintf(" gate: allowed=%v blockedBy=%s", g.Status.Decision.Allowed, g.Status.Decision.BlockedBy)
		}
		return line
	case *v1alpha1.InstallPlan:
		phase := v1alpha1.InstallPlanPhaseNone
		if o.Status != nil {
			phase = o.Status.Phase
		}
		return fmt.Sprintf("InstallPlan %s/%s@%s csvs=%v approved=%v phase=%s", o.Namespace, o.Name, o.ResourceVersion,
			o.Spec.ClusterServiceVersionNames, o.Spec.Approved, phase)
	case *v1alpha1.CatalogSource:
		state := ""
		if o.Status.GRPCConnectionState != nil {
			state = o.Status.GRPCConnectionState.LastObservedState
		}
		return fmt.Sprintf("CatalogSource %s/%s@%s %s", o.Namespace, o.Name, o.ResourceVersion, state)
	}
	return ""
}
