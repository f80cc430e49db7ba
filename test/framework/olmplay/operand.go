package olmplay

import (
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Operand creates an instance of the operator's operand kind with the given conditions.
func (o *Operator) Operand(name string, conds ...metav1.Condition) *unstructured.Unstructured {
	o.K.T.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(OperandGroup(o.Name) + "/v1")
	u.SetKind(OperandKind(o.Name))
	u.SetNamespace(o.K.NS)
	u.SetName(name)
	o.K.Create(u)
	o.SetOperandConditions(u, conds...)
	return u
}

// SetOperandConditions plays the operator writing the operand's status conditions.
func (o *Operator) SetOperandConditions(u *unstructured.Unstructured, conds ...metav1.Condition) {
	o.K.T.Helper()
	var list []any
	for _, c := range conds {
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Now()
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		require.NoError(o.K.T, err)
		list = append(list, m)
	}
	require.NoError(o.K.T, o.K.Client.Get(o.K.Ctx, client.ObjectKeyFromObject(u), u))
	require.NoError(o.K.T, unstructured.SetNestedSlice(u.Object, list, "status", "conditions"))
	require.NoError(o.K.T, o.K.Client.Status().Update(o.K.Ctx, u))
}

// Cond is an operand condition whose message says its type and status.
func Cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: typ + " is " + string(status)}
}

// Healthy are the conditions of an operand that is installed, idle and not degraded.
func Healthy() []metav1.Condition {
	return []metav1.Condition{Cond("Available", "True", "InstallSucceeded"), Cond("Progressing", "False", "InstallSucceeded"), Cond("Degraded", "False", "InstallSucceeded")}
}
