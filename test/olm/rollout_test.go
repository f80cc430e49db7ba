package olm

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rollOut stands in for the kubelet and the Deployment controller, which the test control
// plane lacks: until ctx ends it reports every Deployment's current generation as rolled out
// (all replicas updated, ready and available; Available=True), which is what OLM waits for
// before a CSV succeeds.
func rollOut(ctx context.Context, c client.Client) {
	for ctx.Err() == nil {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list); err == nil {
			for i := range list.Items {
				if d := &list.Items[i]; !rolledOut(d) {
					_ = c.Status().Update(ctx, withRolloutDone(d))
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func rolledOut(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == replicas(d)
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func withRolloutDone(d *appsv1.Deployment) *appsv1.Deployment {
	n, now := replicas(d), metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: "ReplicaSet has successfully progressed.", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	return d
}
