package evaluation_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// A gate whose range does not parse is named with the parser's error, and an extension whose
// catalog selector does not parse is decided (it follows nothing, and says why) without
// stopping the others.
func TestEvalNamesWhyAGateFollowsNothingAndGoesOn(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "snapshots", "ungated-1.0.0.yaml"))
	require.NoError(t, err)
	ext := string(b[strings.Index(string(b), "---\napiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension"):])
	broken := strings.Replace(strings.Replace(ext, "name: tollgate-demo\n", "name: broken\n", 1),
		"matchLabels:\n          olm.operatorframework.io/metadata.name: tollgate-demo-catalog",
		"matchExpressions:\n        - {key: x, operator: Bogus}", 1)
	gate := "---\napiVersion: tollgate.dev/v1alpha1\nkind: ExtensionGate\nmetadata:\n  name: tollgate-demo\nspec:\n  version: \">=1.0.0 <<2\"\n"
	path := filepath.Join(t.TempDir(), "snap.yaml")
	require.NoError(t, os.WriteFile(path, []byte(string(b)+"\n"+broken+"\n"+gate), 0o600))
	snap, err := snapshot.Load(path)
	require.NoError(t, err)
	eng, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	ev := evaluation.New(snap, eng, input.Config{}, now, &bytes.Buffer{})

	xs, err := ev.Extensions(ctx)
	require.NoError(t, err)
	require.Len(t, xs, 2)
	byName := map[string]evaluation.Extension{xs[0].Name: xs[0], xs[1].Name: xs[1]}
	assert.Contains(t, byName["broken"].GateError, "spec.source.catalog.selector is invalid")
	assert.Contains(t, byName["broken"].GateError, `"Bogus" is not a valid label selector operator`)
	assert.Equal(t, "1.0.0", byName["broken"].Target)
	assert.Contains(t, byName["tollgate-demo"].GateError, `spec.version ">=1.0.0 <<2" is not a version range: `)

	var out bytes.Buffer
	require.NoError(t, (&evaluation.Report{Extensions: xs}).WriteTable(&out, printers.TableOptions{}, "tollgate"))
	assert.Contains(t, out.String(), "tollgate-demo follows nothing: spec.version")
}

// A denied bundle of the installed version that no exact pin can exclude (the vendor
// deprecated 1.0.0 and published a rebuild, deprecated too) is said as exposed, not held.
func TestEvalSaysAnUnexcludableBundleIsExposed(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "snapshots", "ungated-1.0.0.yaml"))
	require.NoError(t, err)
	rebuild := `  {"image":"127.0.0.1:5443/bundles/tollgate-demo:v1.0.0-1","name":"tollgate-demo.v1.0.0-rebuild","package":"tollgate-demo","properties":[{"type":"olm.package","value":{"packageName":"tollgate-demo","version":"1.0.0+1"}}],"schema":"olm.bundle"}
  {"entries":[{"reference":{"schema":"olm.bundle","name":"tollgate-demo.v1.0.0"},"message":"use the rebuild"},{"reference":{"schema":"olm.bundle","name":"tollgate-demo.v1.0.0-rebuild"},"message":"both"}],"package":"tollgate-demo","schema":"olm.deprecations"}
kind: CatalogContent`
	snap := strings.Replace(string(b), "kind: CatalogContent", rebuild, 1)
	snap = strings.Replace(snap, `{"name":"tollgate-demo.v1.0.0"},`, `{"name":"tollgate-demo.v1.0.0"},{"name":"tollgate-demo.v1.0.0-rebuild"},`, 1)
	snap += "\n---\napiVersion: tollgate.dev/v1alpha1\nkind: ExtensionGate\nmetadata:\n  name: tollgate-demo\nspec:\n  version: \"<1.1.0\"\n"
	path := filepath.Join(t.TempDir(), "snap.yaml")
	require.NoError(t, os.WriteFile(path, []byte(snap), 0o600))
	s, err := snapshot.Load(path)
	require.NoError(t, err)
	eng, err := engine.New(ctx, engine.Options{})
	require.NoError(t, err)
	xs, err := evaluation.New(s, eng, input.Config{}, now, &bytes.Buffer{}).Extensions(ctx)
	require.NoError(t, err)
	require.Len(t, xs, 1)
	assert.Equal(t, "1.0.0", xs[0].Target)
	assert.Contains(t, xs[0].Unexcludable, "tollgate-demo.v1.0.0-rebuild of catalog tollgate-demo-catalog (BundleDeprecated)")
	var out bytes.Buffer
	require.NoError(t, (&evaluation.Report{Extensions: xs}).WriteTable(&out, printers.TableOptions{}, "tollgate"))
	assert.Contains(t, out.String(), "tollgate-demo is not held, but exposed: OLM v1 may install")
}
