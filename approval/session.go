package approval

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/input"
)

// session remembers what one Decide or Judge call has read and evaluated, so each
// Subscription is gathered and evaluated at most once per kind of decision.
type session struct {
	d     *Decider
	b     *input.Builder
	owns  map[types.NamespacedName]*member // decisions without plan companions
	fulls map[types.NamespacedName]*member // decisions that see their plan companions
	subs  map[string][]v1alpha1.Subscription
}

// member is one Subscription's document and result.
type member struct {
	doc    *input.Document
	result *engine.Result
	peers  []Peer
}

func (d *Decider) builder() *input.Builder {
	return &input.Builder{Reader: d.Reader, Config: d.Input, Now: d.Now}
}

func (d *Decider) session() *session {
	return &session{
		d:     d,
		b:     d.builder(),
		owns:  map[types.NamespacedName]*member{},
		fulls: map[types.NamespacedName]*member{},
		subs:  map[string][]v1alpha1.Subscription{},
	}
}

// full is key's decision with installPlanPeers filled from the peers' own decisions; nil
// when the Subscription does not exist.
func (s *session) full(ctx context.Context, key types.NamespacedName) (*member, error) {
	if m, ok := s.fulls[key]; ok {
		return m, nil
	}
	doc, err := s.b.Build(ctx, key)
	if doc == nil || err != nil {
		return nil, err
	}
	return s.fullOf(ctx, doc)
}

// fullOf is full on doc, a document just gathered.
func (s *session) fullOf(ctx context.Context, doc *input.Document) (*member, error) {
	key := client.ObjectKeyFromObject(doc.Subscription)
	m := &member{doc: doc}
	var err error
	if m.peers, err = s.peersOf(ctx, doc); err != nil {
		return nil, err
	}
	doc.SetPeers(peerData(m.peers))
	m.result = s.d.Policies.Evaluate(ctx, doc.Doc)
	s.fulls[key] = m
	if len(m.peers) == 0 { // nothing to see: its own decision is the same
		s.owns[key] = m
	}
	return m, nil
}

// own is key's decision without its plan companions (installPlanPeers empty); nil when the
// Subscription does not exist.
func (s *session) own(ctx context.Context, key types.NamespacedName) (*member, error) {
	if m, ok := s.owns[key]; ok {
		return m, nil
	}
	doc, err := s.b.Build(ctx, key)
	if doc == nil || err != nil {
		return nil, err
	}
	m := &member{doc: doc, result: s.d.Policies.Evaluate(ctx, doc.Doc)}
	s.owns[key] = m
	return m, nil
}

// peersOf are the other CSVs of doc's pending plans, each with the own decision of a
// Subscription that claims it: the first whose decision is not allowed, else the first.
func (s *session) peersOf(ctx context.Context, doc *input.Document) ([]Peer, error) {
	var peers []Peer
	self := doc.Subscription.Status.CurrentCSV
	for i := range doc.PendingInstallPlans {
		plan := &doc.PendingInstallPlans[i]
		csvs := slices.Clone(plan.Spec.ClusterServiceVersionNames)
		slices.Sort(csvs)
		for _, csv := range slices.Compact(csvs) {
			if csv == self {
				continue
			}
			p, err := s.peer(ctx, plan, csv)
			if err != nil {
				return nil, err
			}
			peers = append(peers, p)
		}
	}
	return peers, nil
}

// peer is csv of plan with the own decision of the claimant that speaks for it, or, with no
// claimant, the new dependency the plan subscribes to.
func (s *session) peer(ctx context.Context, plan *v1alpha1.InstallPlan, csv string) (Peer, error) {
	p := Peer{InstallPlan: plan.Name, CSV: csv}
	subs, err := s.claimants(ctx, plan.Namespace, csv)
	if err != nil {
		return p, err
	}
	if len(subs) == 0 {
		p.Dependency, err = s.newDependency(ctx, plan, csv)
		return p, err
	}
	for _, sub := range subs {
		key := client.ObjectKeyFromObject(sub)
		m, err := s.own(ctx, key)
		if err != nil {
			return p, fmt.Errorf("evaluate %s, whose %s InstallPlan %s also installs: %w", key, csv, plan.Name, err)
		}
		if m == nil {
			continue
		}
		if p.Subscription == nil || (p.Result.Decision.Allowed && !m.result.Decision.Allowed) {
			p.Subscription, p.Document, p.Result = &key, m.doc, m.result
		}
	}
	return p, nil
}

// peerData is installPlanPeers as policies/README.md documents it.
func peerData(peers []Peer) []any {
	out := make([]any, 0, len(peers))
	for _, p := range peers {
		e := map[string]any{"installPlan": p.InstallPlan, "csv": p.CSV, "subscription": nil, "allowed": false, "codes": []any{}}
		if p.Dependency != nil { // allowed: nothing installed that could object, see newDependency
			e["allowed"] = true
			e["newDependency"] = map[string]any{"subscription": p.Dependency.Subscription, "package": p.Dependency.Package}
		}
		if p.Subscription != nil {
			e["subscription"] = map[string]any{"namespace": p.Subscription.Namespace, "name": p.Subscription.Name}
			e["allowed"] = p.Result.Decision.Allowed
			codes := []any{}
			for _, c := range Standing(p.Result.Decision) {
				codes = append(codes, c)
			}
			e["codes"] = codes
		}
		out = append(out, e)
	}
	return out
}

// claimants are the Subscriptions in ns that claim csv, by name: every one whose
// status.currentCSV is csv (OLM's resolver sets it on every Subscription that matches the
// package, channel and catalog), and every other Subscription of the same package as one of
// them, since a namespace runs one CSV of a package whichever Subscription asked for it.
func (s *session) claimants(ctx context.Context, ns, csv string) ([]*v1alpha1.Subscription, error) {
	subs, err := s.subscriptions(ctx, ns)
	if csv == "" || err != nil {
		return nil, err
	}
	packages := map[string]bool{}
	for i := range subs {
		if subs[i].Status.CurrentCSV == csv && packageOf(&subs[i]) != "" {
			packages[packageOf(&subs[i])] = true
		}
	}
	var out []*v1alpha1.Subscription
	for i := range subs {
		if subs[i].Status.CurrentCSV == csv || packages[packageOf(&subs[i])] {
			out = append(out, &subs[i])
		}
	}
	return out, nil
}

// newDependency is the Subscription plan creates for csv when csv is a new operator in the
// namespace, as OLM installs a package another bundle requires: no Subscription there follows
// its package, and every CSV there is a Subscription's installed or current CSV (or a copy OLM
// made of another namespace's), so csv replaces nothing that no gate judges. Nothing installed
// can object to it, and once installed its Subscription is gated like any other. Nil when csv
// is not such a dependency.
func (s *session) newDependency(ctx context.Context, plan *v1alpha1.InstallPlan, csv string) (*v1alpha1.Dependency, error) {
	dep := plan.DependencyOf(csv)
	if dep == nil {
		return nil, nil
	}
	subs, err := s.subscriptions(ctx, plan.Namespace)
	if err != nil {
		return nil, err
	}
	accounted := map[string]bool{}
	for i := range subs {
		if packageOf(&subs[i]) == dep.Package {
			return nil, nil
		}
		accounted[subs[i].Status.InstalledCSV], accounted[subs[i].Status.CurrentCSV] = true, true
	}
	var csvs v1alpha1.ClusterServiceVersionList
	if err := s.d.Reader.List(ctx, &csvs, client.InNamespace(plan.Namespace)); err != nil {
		return nil, fmt.Errorf("list ClusterServiceVersions in %s: %w", plan.Namespace, err)
	}
	for _, c := range csvs.Items {
		if !accounted[c.Name] && c.Labels[v1alpha1.CopiedFromLabel] == "" {
			return nil, nil
		}
	}
	return dep, nil
}

// subscriptions are the Subscriptions in ns by name, listed once per session.
func (s *session) subscriptions(ctx context.Context, ns string) ([]v1alpha1.Subscription, error) {
	if subs, ok := s.subs[ns]; ok {
		return subs, nil
	}
	var list v1alpha1.SubscriptionList
	if err := s.d.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list subscriptions in %s: %w", ns, err)
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.Subscription) int { return cmp.Compare(a.Name, b.Name) })
	s.subs[ns] = list.Items
	return list.Items, nil
}

// packageOf is the package sub follows ("" when unset).
func packageOf(sub *v1alpha1.Subscription) string {
	if sub.Spec == nil {
		return ""
	}
	return sub.Spec.Package
}

// verdict judges plan: eligible, and every CSV it lists allowed by an Enforce-mode gate of a
// Manual Subscription whose decision (seeing its own plan companions) says allowed: true.
func (s *session) verdict(ctx context.Context, plan *v1alpha1.InstallPlan) (Verdict, error) {
	v := Verdict{Namespace: plan.Namespace, Name: plan.Name, CSVs: plan.Spec.ClusterServiceVersionNames, Blockers: []Blocker{}}
	if v.CSVs == nil {
		v.CSVs = []string{}
	}
	if v.Ineligible = ineligible(plan); v.Ineligible != "" {
		return v, nil
	}
	if len(slices.Compact(slices.Sorted(slices.Values(plan.Spec.ClusterServiceVersionNames)))) > MaxBundle {
		v.Blockers = append(v.Blockers, Blocker{Reason: BlockTooManyOperators})
		return v, nil
	}
	for _, csv := range plan.Spec.ClusterServiceVersionNames {
		bs, err := s.blockers(ctx, plan, csv)
		if err != nil {
			return v, err
		}
		v.Blockers = append(v.Blockers, bs...)
	}
	v.Approvable = len(v.Blockers) == 0
	return v, nil
}

// blockers are why csv holds plan: no Subscription claims it (unless it is a new dependency
// the plan subscribes to), or one blocker for each claimant that does not let it through.
// Every claimant must: a decoy that claims the CSV beside a held Subscription must not stand
// in for it.
func (s *session) blockers(ctx context.Context, plan *v1alpha1.InstallPlan, csv string) ([]Blocker, error) {
	subs, err := s.claimants(ctx, plan.Namespace, csv)
	if err != nil {
		return nil, err
	}
	if len(subs) == 0 {
		dep, err := s.newDependency(ctx, plan, csv)
		if err != nil || dep != nil {
			return nil, err
		}
		return []Blocker{{CSV: csv, Reason: BlockNoSubscription}}, nil
	}
	var out []Blocker
	for _, sub := range subs {
		b, err := s.blocker(ctx, csv, client.ObjectKeyFromObject(sub))
		if err != nil {
			return nil, err
		}
		if b != nil {
			out = append(out, *b)
		}
	}
	return out, nil
}

// blocker is why the claimant key holds a plan that installs csv, or nil when it does not.
func (s *session) blocker(ctx context.Context, csv string, key types.NamespacedName) (*Blocker, error) {
	m, err := s.full(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s, whose %s the plan installs: %w", key, csv, err)
	}
	b := &Blocker{CSV: csv, Subscription: key.String()}
	switch {
	case m == nil:
		b.Reason = BlockNoSubscription
	case !m.result.Decision.Allowed:
		b.Reason, b.Codes = BlockDenied, Standing(m.result.Decision)
	case m.doc.Gate == nil:
		b.Reason = BlockNoGate
	case s.d.Mode(m.doc.Gate) != tollgatev1alpha1.ModeEnforce:
		b.Reason = BlockAudit
	case ApprovalOf(m.doc.Subscription) != v1alpha1.ApprovalManual:
		b.Reason = BlockAutomatic
	default:
		return nil, nil
	}
	return b, nil
}
