package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// crdCheck is an input.OperandKinds from a function.
type crdCheck func(context.Context, input.OwnedKind) error

func (f crdCheck) Check(ctx context.Context, k input.OwnedKind) (input.OwnedKind, error) {
	return k, f(ctx, k)
}

// The access check itself runs on a real API server in test/rbac; this is its bookkeeping.
func TestOperandAccess(t *testing.T) {
	kind := input.OwnedKind{CRD: "redisclusters.redis.example.com", Resource: "redisclusters",
		GroupVersionKind: schema.GroupVersionKind{Group: "redis.example.com", Version: "v1", Kind: "RedisCluster"}}
	tests := []struct {
		scenario string
		crd      error
		allowed  map[string]bool // verb → allowed
		want     string          // the error, "" for readable
		reviews  int             // SelfSubjectAccessReviews made by two checks in a row
	}{
		{scenario: "a readable kind is remembered", allowed: map[string]bool{"list": true, "watch": true}, reviews: 2},
		{scenario: "a kind no CRD serves is not reviewed", crd: input.ErrNotOperand, want: input.ErrNotOperand.Error()},
		{scenario: "a kind Tollgate may not watch says which rule to add", allowed: map[string]bool{"list": true}, reviews: 4,
			want: `Tollgate may not watch redisclusters.redis.example.com in all namespaces; grant it with a ClusterRole labelled ` +
				`tollgate.dev/aggregate-to-operand-reader: "true" holding the rule {apiGroups: ["redis.example.com"], resources: ["redisclusters"], verbs: [get, list, watch]}`},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			reviews := 0
			c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
					review := obj.(*authorizationv1.SelfSubjectAccessReview)
					reviews++
					review.Status.Allowed = tt.allowed[review.Spec.ResourceAttributes.Verb]
					return nil
				}}).Build()
			a := newOperandAccess(nil, c)
			a.crds = crdCheck(func(context.Context, input.OwnedKind) error { return tt.crd })
			for range 2 {
				_, err := a.Check(context.Background(), kind)
				if tt.want == "" {
					require.NoError(t, err)
					continue
				}
				require.Error(t, err)
				var unreadable *input.UnreadableError
				if errors.As(err, &unreadable) {
					assert.Equal(t, tt.want, unreadable.Message)
				} else {
					assert.ErrorContains(t, err, tt.want)
				}
			}
			assert.Equal(t, tt.reviews, reviews)
		})
	}
}

func TestOperandAccessIsCheckedAgainLater(t *testing.T) {
	reviews := 0
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			reviews++
			obj.(*authorizationv1.SelfSubjectAccessReview).Status.Allowed = true
			return nil
		}}).Build()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newOperandAccess(nil, c)
	a.crds = crdCheck(func(context.Context, input.OwnedKind) error { return nil })
	a.now = func() time.Time { return now }
	kind := input.OwnedKind{CRD: "as.example.com", Resource: "as", GroupVersionKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "A"}}
	_, err := a.Check(context.Background(), kind)
	require.NoError(t, err)
	now = now.Add(operandRecheck)
	_, err = a.Check(context.Background(), kind)
	require.NoError(t, err)
	assert.Equal(t, 4, reviews, "revoked access shows after operandRecheck")
}
