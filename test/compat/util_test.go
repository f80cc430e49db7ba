package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// namespace creates a fresh namespace for one test.
func namespace(t *testing.T, env *controlplane.Env) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-"))[:20] + "-"}}
	require.NoError(t, env.Client.Create(context.Background(), ns))
	return ns.Name
}

func toUnstructured(obj client.Object) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

func typeName(obj client.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*")
}
