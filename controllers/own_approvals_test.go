package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

func TestTheApprovalsOwnEventReevaluatesOnlyTheOtherSubscriptions(t *testing.T) {
	planAt := func(rv string) *v1alpha1.InstallPlan {
		return &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "install-1", ResourceVersion: rv}}
	}
	etcd, redis := types.NamespacedName{Namespace: "ns", Name: "etcd"}, types.NamespacedName{Namespace: "ns", Name: "redis"}

	var a ownApprovals
	assert.False(t, a.mine(planAt("7"), etcd), "nothing approved")

	a.record(planAt("7"), etcd)
	assert.False(t, a.mine(planAt("7"), redis), "a peer in the plan is re-evaluated")
	assert.True(t, a.mine(planAt("7"), etcd), "the approver's own event is not")
	assert.False(t, a.mine(planAt("7"), etcd), "once only")

	a.record(planAt("7"), etcd)
	assert.False(t, a.mine(planAt("8"), etcd), "a later version of the plan is news")
	assert.False(t, a.mine(planAt("7"), etcd), "and ends the memory")
}
