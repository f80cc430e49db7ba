package olmv1

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/gatelock"
)

// TestGateLockKeepsThePinTollgates: under the gate lock (every world runs with it), a cluster
// admin outside the break-glass group cannot move a pin Tollgate holds; a member of the group
// can, and Tollgate reports that bypass on the ClusterExtension and its gate, and takes the pin
// back to what the policies allow. Deleting the gate hands the extension back, record and all:
// then anyone RBAC lets may move it.
func TestGateLockKeepsThePinTollgates(t *testing.T) {
	w := gatedWorld(t, "catalog-v2")
	w.gateExtension(pkgName, tollgatev1alpha1.ExtensionGateSpec{Version: "<1.2.0"})
	w.waitInstalled(pkgName, "1.1.0")
	w.waitGate(pkgName, "pinned at 1.1.0", func(g *tollgatev1alpha1.ExtensionGate) bool { return g.Status.Pin == "1.1.0" })

	u := w.get(clusterExtensionKind, pkgName)
	before := u.DeepCopy()
	require.NoError(t, setPin(u, "1.2.0"))
	move := client.MergeFrom(before)
	err := w.c.Patch(w.ctx, u.DeepCopy(), move)
	require.True(t, gatelock.Refused(err), "the gate lock refuses a cluster admin's pin: %v", err)
	t.Logf("refused: %v", err)

	breakGlass, err := gatelock.BreakGlass(w.env.Config)
	require.NoError(t, err)
	require.NoError(t, breakGlass.Patch(w.ctx, u, move, client.FieldOwner("kubectl-patch")), "break-glass moves the pin")
	w.waitBypassReported(pkgName)
	g := w.waitGate(pkgName, "the pin taken back", func(g *tollgatev1alpha1.ExtensionGate) bool {
		return g.Status.Pin == "1.1.0" && nestedString(w.get(clusterExtensionKind, pkgName), "spec", "source", "catalog", "version") == "1.1.0"
	})
	require.Len(t, g.Status.Bypasses, 1, "the bypass recorded once")
	b := g.Status.Bypasses[0]
	require.Equal(t, []string{"1.1.0", "1.2.0", "kubectl-patch"}, []string{b.From, b.To, b.By}, "what moved, and which client moved it")
	require.False(t, b.Decision.Allowed, "1.2.0 is outside the gate's range: %+v", b.Decision)

	// Deleting the gate is the way out: Tollgate removes its record, and the lock lets go.
	require.NoError(t, w.c.Delete(w.ctx, &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: pkgName}}))
	w.waitFor(clusterExtensionKind, pkgName, "its pin record removed", func(u *unstructured.Unstructured) bool {
		_, recorded := u.GetAnnotations()[tollgatev1alpha1.PinRecordAnnotation]
		return !recorded
	})
	w.waitEvent(pkgName, "PinHandedBack")
	w.pin(pkgName, "1.2.0")
	w.waitInstalled(pkgName, "1.2.0")
}

// waitBypassReported waits for the Warning events that report a bypass of the ClusterExtension
// name's pin: one on the extension, one on its gate.
func (w *world) waitBypassReported(name string) {
	w.t.Helper()
	var seen []string
	w.eventually("a bypass of "+name+" reported on the extension and its gate", func() bool {
		events := &corev1.EventList{}
		if err := w.c.List(w.ctx, events); err != nil {
			return false
		}
		seen = seen[:0]
		kinds := map[string]bool{}
		for _, e := range events.Items {
			seen = append(seen, e.InvolvedObject.Kind+" "+e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
			if e.InvolvedObject.Name == name && e.Reason == bypassReason && e.Type == corev1.EventTypeWarning {
				kinds[e.InvolvedObject.Kind] = true
				w.t.Logf("%s %s: %s", e.InvolvedObject.Kind, e.Reason, e.Message)
			}
		}
		return kinds["ClusterExtension"] && kinds["ExtensionGate"]
	}, func() string { return strings.Join(seen, "\n") })
}

// bypassReason is the reason of the events that report a bypass.
const bypassReason = "Bypassed"
