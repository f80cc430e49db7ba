package policysource_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cm.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

const freezeCM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: freeze
  labels: {tollgate.dev/policy: rego}
data:
  freeze.rego: "package tollgate.packs.freeze\n"
`

func TestReadConfigMapFile(t *testing.T) {
	path := writeFile(t, "---\n"+freezeCM+"---\n"+strings.Replace(freezeCM, "name: freeze", "name: other\n  namespace: tollgate-system", 1))
	cms, err := policysource.ReadConfigMapFile(path, "tollgate-system")
	require.NoError(t, err)
	require.Len(t, cms, 2)
	assert.Equal(t, []string{"freeze", "other"}, []string{cms[0].Name, cms[1].Name})
	assert.Equal(t, "tollgate-system", cms[0].Namespace, "a ConfigMap without a namespace is put in the policy namespace")
	assert.Contains(t, cms[0].Data, "freeze.rego")
}

func TestReadConfigMapFileRefusesWhatTheManagerWouldNotRead(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"no label", strings.Replace(freezeCM, "  labels: {tollgate.dev/policy: rego}\n", "", 1), "document 1: ConfigMap freeze has no label tollgate.dev/policy"},
		{"another namespace", strings.Replace(freezeCM, "name: freeze", "name: freeze\n  namespace: default", 1), "document 1: ConfigMap freeze is in namespace default, but the policy ConfigMaps are in tollgate-system"},
		{"not a ConfigMap", strings.Replace(freezeCM, "kind: ConfigMap", "kind: Secret", 1), `document 1: a Secret "v1", not a v1 ConfigMap`},
		{"no name", strings.Replace(freezeCM, "name: freeze", "generateName: f-", 1), "document 1: the ConfigMap has no metadata.name"},
		{"nothing", "---\n", "holds no ConfigMap"},
		{"not YAML", freezeCM + "---\n: [\n", "document 2:"},
		{"too large", freezeCM + "#" + strings.Repeat("x", 16<<20) + "\n", "is larger than 16 MiB: nothing of it is read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.content)
			cms, err := policysource.ReadConfigMapFile(path, "tollgate-system")
			require.Error(t, err)
			assert.Nil(t, cms)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
