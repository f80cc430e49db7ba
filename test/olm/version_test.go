package olm

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
)

// The API server reports the version it was built from, which real OLM parses to check an
// operator's minKubeVersion (a build from the module would report v0.0.0-master).
func TestAPIServerReportsAVersionOLMParses(t *testing.T) {
	w := newOLMWorld(t, true)
	dc, err := discovery.NewDiscoveryClientForConfig(w.env.Config)
	require.NoError(t, err)
	info, err := dc.ServerVersion()
	require.NoError(t, err)
	v, err := version.ParseSemantic(info.GitVersion)
	require.NoError(t, err, "OLM parses the server's version %q", info.GitVersion)
	require.Positive(t, v.Minor(), "the server's version %s", info.GitVersion)
}
