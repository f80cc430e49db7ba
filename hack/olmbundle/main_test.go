package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The bundle owns both gates' CRDs: each is a manifest, an owned CRD of the CSV with a sample in
// alm-examples, and an olm.gvk property of the catalog's bundle, in the order opm renders them.
func TestTheBundleOwnsBothGates(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, run(filepath.Join("..", ".."), out))
	for _, f := range []string{"tollgate.dev_upgradegates.yaml", "tollgate.dev_extensiongates.yaml"} {
		assert.FileExists(t, filepath.Join(out, "olm", "manifests", f))
	}

	var csv struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			CRDs struct {
				Owned []map[string]string `json:"owned"`
			} `json:"customresourcedefinitions"`
		} `json:"spec"`
	}
	data, err := os.ReadFile(filepath.Join(out, "olm", "manifests", "tollgate.clusterserviceversion.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &csv))
	var kinds []string
	for _, o := range csv.Spec.CRDs.Owned {
		kinds = append(kinds, o["kind"])
		assert.NotEmpty(t, o["description"])
	}
	assert.Equal(t, []string{"UpgradeGate", "ExtensionGate"}, kinds)
	examples := csv.Metadata.Annotations["alm-examples"]
	assert.Contains(t, examples, `"kind":"UpgradeGate"`)
	assert.Contains(t, examples, `"kind":"ExtensionGate"`)
	assert.Contains(t, examples, `"version":">=0.6.0 <0.9.0"`, "unescaped")

	catalog, err := os.ReadFile(filepath.Join(out, "catalog", "tollgate", "catalog.yaml"))
	require.NoError(t, err)
	ext, up := strings.Index(string(catalog), "kind: ExtensionGate"), strings.Index(string(catalog), "kind: UpgradeGate")
	assert.True(t, ext >= 0 && up > ext, "both olm.gvk properties, sorted as opm sorts them")
}
