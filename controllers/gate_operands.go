package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// operandWatches starts a watch on each operand kind the first time an installed CSV owns
// it, and remembers which Subscriptions own which kinds and in which namespaces, so an
// operand turning Degraded re-evaluates exactly its operators.
type operandWatches struct {
	ctrl   controller.Controller
	cache  cache.Cache
	mapper meta.RESTMapper

	mu      sync.RWMutex
	watched map[schema.GroupVersionKind]bool
	// owners[gvk][sub] are the namespaces sub reads gvk in; nil means every namespace.
	owners map[schema.GroupVersionKind]map[types.NamespacedName][]string
}

func newOperandWatches(c controller.Controller, ca cache.Cache, m meta.RESTMapper) *operandWatches {
	return &operandWatches{ctrl: c, cache: ca, mapper: m,
		watched: map[schema.GroupVersionKind]bool{}, owners: map[schema.GroupVersionKind]map[types.NamespacedName][]string{}}
}

// readOperands is how a gate controller c reads operands: from the cache, minus the kinds the
// API server does not serve, each kind watched once a gate reads it (operandWatches). A live
// List per decision would cost the API server more than the decision's own write.
func readOperands(c controller.Controller, mgr ctrl.Manager) (*operandWatches, client.Reader) {
	return newOperandWatches(c, mgr.GetCache(), mgr.GetRESTMapper()), newUnservedKinds(mgr.GetCache(), mgr.GetClient())
}

// watch records that sub owns gvks (and no others), read in namespaces (nil: all), and
// watches any new kind the API server serves. A kind that is not served yet is retried on the next reconcile: OLM installs a
// CSV's CRDs before the CSV succeeds, and the CSV's update brings us back.
func (w *operandWatches) watch(ctx context.Context, sub types.NamespacedName, gvks []schema.GroupVersionKind, namespaces []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(sub)
	for _, gvk := range gvks {
		if w.owners[gvk] == nil {
			w.owners[gvk] = map[types.NamespacedName][]string{}
		}
		w.owners[gvk][sub] = namespaces
		if w.watched[gvk] {
			continue
		}
		if _, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return fmt.Errorf("look up operand kind %s: %w", gvk, err)
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := w.ctrl.Watch(source.Kind[client.Object](w.cache, u, w.ownedBy(gvk))); err != nil {
			return fmt.Errorf("watch operand kind %s: %w", gvk, err)
		}
		w.watched[gvk] = true
		ctrl.LoggerFrom(ctx).Info("watching operand kind", "gvk", gvk.String())
	}
	return nil
}

// ownedBy enqueues the Subscriptions whose installed CSV owns gvk and that read the
// operand's namespace (every one for a cluster-scoped operand).
func (w *operandWatches) ownedBy(gvk schema.GroupVersionKind) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		w.mu.RLock()
		defer w.mu.RUnlock()
		var reqs []reconcile.Request
		for sub, namespaces := range w.owners[gvk] {
			if namespaces == nil || obj.GetNamespace() == "" || slices.Contains(namespaces, obj.GetNamespace()) {
				reqs = append(reqs, reconcile.Request{NamespacedName: sub})
			}
		}
		return reqs
	})
}

// forget drops a Subscription that is gone.
func (w *operandWatches) forget(sub types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(sub)
}

func (w *operandWatches) forgetLocked(sub types.NamespacedName) {
	for _, owners := range w.owners {
		delete(owners, sub)
	}
}

// OperandReaderLabel marks the ClusterRoles aggregated into tollgate-operand-reader, the role
// that lets Tollgate read operand kinds (config/rbac/operand_reader_role.yaml).
const OperandReaderLabel = "tollgate.dev/aggregate-to-operand-reader"

// operandRecheck is how long a kind found readable is trusted before it is checked again, so
// revoked access shows on the gates without a restart.
const operandRecheck = 10 * time.Minute

// operandAccess is the manager's input.OperandKinds. A kind is an operand when the
// CustomResourceDefinition the CSV names serves it (read live by name: input.ServedByCRD), and
// Tollgate reads it only when its RBAC lets it list and watch the kind in every namespace (a
// SelfSubjectAccessReview per verb): the cache must never start an informer it may not run,
// since a List through it would wait for that informer forever.
type operandAccess struct {
	crds    input.OperandKinds
	reviews client.Client // creates SelfSubjectAccessReviews
	now     func() time.Time

	mu       sync.Mutex
	readable map[input.OwnedKind]readable // owned kinds last found readable
	reported map[input.OwnedKind]bool     // unreadable kinds already logged
}

func newOperandAccess(crds client.Reader, reviews client.Client) *operandAccess {
	return &operandAccess{crds: input.ServedByCRD{Reader: crds}, reviews: reviews, now: time.Now,
		readable: map[input.OwnedKind]readable{}, reported: map[input.OwnedKind]bool{}}
}

// readable is an owned kind found readable: the kind to read it as, and when it was found.
type readable struct {
	as input.OwnedKind
	at time.Time
}

// Check implements input.OperandKinds.
func (a *operandAccess) Check(ctx context.Context, owned input.OwnedKind) (input.OwnedKind, error) {
	a.mu.Lock()
	r, ok := a.readable[owned]
	a.mu.Unlock()
	if ok && a.now().Sub(r.at) < operandRecheck {
		return r.as, nil
	}
	k, err := a.crds.Check(ctx, owned)
	if err != nil {
		return owned, err
	}
	denied, err := a.denied(ctx, k)
	if err != nil {
		return owned, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(denied) == 0 {
		a.readable[owned] = readable{as: k, at: a.now()}
		delete(a.reported, k)
		return k, nil
	}
	delete(a.readable, owned)
	unreadable := &input.UnreadableError{Kind: k, Message: fmt.Sprintf(
		"Tollgate may not %s %s in all namespaces; grant it with a ClusterRole labelled %s: \"true\" holding the rule %s",
		strings.Join(denied, " or "), k.CRD, OperandReaderLabel, k.ReadRule())}
	if !a.reported[k] { // logged once until it changes; the gate's health says it every time
		a.reported[k] = true
		ctrl.LoggerFrom(ctx).Info("operand kind not readable: health is Unknown until the rule is granted",
			"crd", k.CRD, "denied", denied, "label", OperandReaderLabel+"=true", "rule", k.ReadRule())
	}
	return owned, unreadable
}

// denied are the verbs of list and watch, cluster-wide, that Tollgate may not use on k.
func (a *operandAccess) denied(ctx context.Context, k input.OwnedKind) ([]string, error) {
	var denied []string
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: k.Group, Version: k.Version, Resource: k.Resource}}}
		if err := a.reviews.Create(ctx, review); err != nil {
			return nil, fmt.Errorf("review access to %s: %w", k.CRD, err)
		}
		if !review.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	return denied, nil
}
