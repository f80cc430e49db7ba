package e2e

import (
	"strings"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// event waits for an Event on obj (the object of its kind) with the given type and reason
// whose message contains text.
func (k *cluster) event(obj client.Object, typ, reason, text string) {
	k.T.Helper()
	gvk, err := apiutil.GVKForObject(obj, k.Client.Scheme())
	require.NoError(k.T, err)
	require.Eventually(k.T, func() bool {
		list := &corev1.EventList{}
		if err := k.Client.List(k.Ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == gvk.Kind && e.InvolvedObject.Name == obj.GetName() && e.Type == typ && e.Reason == reason && strings.Contains(e.Message, text) {
				return true
			}
		}
		return false
	}, olmplay.Wait, olmplay.Tick, "no %s event %s on %s containing %q", typ, reason, obj.GetName(), text)
}
