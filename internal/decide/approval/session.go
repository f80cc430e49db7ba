package approval

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// session remembers what one Decide or Judge call has read and evaluated, so each
// Subscription is gathered and evaluated at most once per kind of decision.
type session struct {
	d    *Decider
	b    *input.Builder
	owns map[types.NamespacedName]*member // decisions without plan companions
	deps map[types.NamespacedName]*member // dependencies' decisions, by plan and CSV
	subs map[string][]v1alpha1.Subscription
	// denied is, by Subscription, the first move its document denied (its Doc and result).
	denied map[types.NamespacedName]*member
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
		d:    d,
		b:    d.builder(),
		owns: map[types.NamespacedName]*member{},
		deps: map[types.NamespacedName]*member{},
		subs: map[string][]v1alpha1.Subscription{},

		denied: map[types.NamespacedName]*member{},
	}
}

// fullOf is the decision on doc, a document just gathered, with installPlanPeers filled from
// the peers' own decisions.
func (s *session) fullOf(ctx context.Context, doc *input.Document) (*member, error) {
	key := client.ObjectKeyFromObject(doc.Subscription)
	m := &member{doc: doc}
	var err error
	if m.peers, err = s.peersOf(ctx, doc); err != nil {
		return nil, err
	}
	doc.SetPeers(peerData(m.peers))
	m.result = s.d.Policies.Evaluate(ctx, doc.Doc)
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
// claimant, the decision of the dependency the plan subscribes to.
func (s *session) peer(ctx context.Context, plan *v1alpha1.InstallPlan, csv string) (Peer, error) {
	p := Peer{InstallPlan: plan.Name, CSV: csv}
	facts := plan.FactsOf(csv)
	subs, err := s.claimants(ctx, plan.Namespace, csv)
	if err != nil {
		return p, err
	}
	if b, err := s.attribution(ctx, plan.Namespace, subs, &facts); b != nil || err != nil {
		if b != nil {
			p.Unattributed = b.detail()
		}
		return p, err
	}
	if len(subs) == 0 {
		if len(facts.Dependencies) == 0 {
			return p, nil
		}
		p.Dependency = &facts.Dependencies[0] // one: attribution holds several
		m, err := s.dependency(ctx, plan, csv, p.Dependency)
		if err != nil {
			return p, err
		}
		p.Document, p.Result = m.doc, m.result
		return p, nil
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
		if p.Dependency != nil {
			e["newDependency"] = map[string]any{"subscription": p.Dependency.Subscription, "package": p.Dependency.Package}
		}
		if p.Unattributed != "" {
			e["unattributed"] = p.Unattributed
		}
		if p.Subscription != nil {
			e["subscription"] = map[string]any{"namespace": p.Subscription.Namespace, "name": p.Subscription.Name}
		}
		if p.Result != nil {
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
	return s.following(ctx, ns, csv, func(sub *v1alpha1.Subscription) bool { return sub.Status.CurrentCSV == csv })
}

// owners are the Subscriptions in ns that own csv, an existing CSV: those whose installed or
// current CSV it is, and every other Subscription of the same package as one of them.
func (s *session) owners(ctx context.Context, ns, csv string) ([]*v1alpha1.Subscription, error) {
	return s.following(ctx, ns, csv, func(sub *v1alpha1.Subscription) bool {
		return sub.Status.CurrentCSV == csv || sub.Status.InstalledCSV == csv
	})
}

// following are the Subscriptions in ns that match, and those of the same package as one
// that does, by name; none for an empty csv.
func (s *session) following(ctx context.Context, ns, csv string, match func(*v1alpha1.Subscription) bool) ([]*v1alpha1.Subscription, error) {
	subs, err := s.subscriptions(ctx, ns)
	if csv == "" || err != nil {
		return nil, err
	}
	packages := map[string]bool{}
	for i := range subs {
		if match(&subs[i]) && packageOf(&subs[i]) != "" {
			packages[packageOf(&subs[i])] = true
		}
	}
	var out []*v1alpha1.Subscription
	for i := range subs {
		if match(&subs[i]) || packages[packageOf(&subs[i])] {
			out = append(out, &subs[i])
		}
	}
	return out, nil
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
