package pin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// The operands read are instances of the kinds the installed bundle provides; once no catalog
// lists it, another bundle's kinds are not read in its place.
func TestOperandKindsAreTheInstalledBundles(t *testing.T) {
	gvk := func(kind string) string {
		return `{"type":"olm.gvk","value":{"group":"example.com","version":"v1","kind":"` + kind + `"}}`
	}
	bundle := func(name, kind string) string {
		return `{"schema":"olm.bundle","name":"` + name + `","package":"p","image":"x","properties":[` + gvk(kind) + `]}`
	}
	c, err := fbc.Read(strings.NewReader(bundle("p.v1", "Old")+"\n"+bundle("p.v2", "New")), fbc.DefaultLimits)
	require.NoError(t, err)
	ext := &olmv1.ClusterExtension{}
	ext.Spec.Source.Catalog = &olmv1.CatalogFilter{PackageName: "p"}
	ext.Status.Install = &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: "p.v1", Version: "1.0.0"}}
	f := Facts{Extension: input.Extension{Extension: ext}, Content: map[string]*fbc.Catalog{"a": c}}
	kinds := (&Gatherer{}).operandKinds(f)
	require.Len(t, kinds, 1)
	assert.Equal(t, "Old", kinds[0].Kind)

	ext.Status.Install.Bundle.Name = "p.v0"
	assert.Empty(t, (&Gatherer{}).operandKinds(f))
}
