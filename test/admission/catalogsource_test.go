package admission

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// deprecation is the deprecated policy's warning for each legacy field.
var deprecation = map[string]string{
	"sourceType":    "spec.sourceType is deprecated: use spec.catalogImageSource, spec.catalogServiceSource or spec.configMapSource instead",
	"image":         "spec.image is deprecated: use spec.catalogImageSource.catalogImage instead",
	"address":       "spec.address is deprecated: use spec.catalogServiceSource.address instead",
	"configMap":     "spec.configMap is deprecated: use spec.configMapSource.configMap instead",
	"grpcPodConfig": "spec.grpcPodConfig is deprecated: use spec.catalogImageSource.podSpecOverrides instead",
}

// admissionCase is one CatalogSource spec and what the API server must do with it.
type admissionCase struct {
	name string
	spec map[string]any
	// strict sends the request with fieldValidation=Strict, as kubectl does; the API server
	// answers an unknown field with 400 Bad Request instead of 422 Invalid.
	strict bool
	// violations are the valid policy's messages, in its order; none when it admits the spec.
	violations []string
	// schemaError is the CRD's own rejection, which comes before admission; "" when none.
	schemaError string
	// deprecated are the legacy fields the deprecated policy must warn about, in its order;
	// it warns about a spec the valid policy denies too.
	deprecated []string
	// otherWarnings are the API server's own warnings, verbatim.
	otherWarnings []string
	// stored is the spec the API server keeps when it is not spec (pruned fields).
	stored map[string]any
}

func (tc admissionCase) wantError(name string) string {
	switch {
	case tc.schemaError != "":
		return tc.schemaError
	case len(tc.violations) > 0:
		return `catalogsources.operators.coreos.com "` + name + `" is forbidden: ValidatingAdmissionPolicy '` + validPolicy +
			`' with binding '` + validPolicy + `' denied request: ` + strings.Join(tc.violations, "; ")
	}
	return ""
}

func (tc admissionCase) wantWarnings() []string {
	want := append([]string(nil), tc.otherWarnings...)
	if tc.schemaError != "" {
		return want
	}
	for _, f := range tc.deprecated {
		want = append(want, "Validation failed for ValidatingAdmissionPolicy '"+deprecatedPolicy+"' with binding '"+deprecatedPolicy+"': "+deprecation[f])
	}
	return want
}

// check dry-runs the create of tc.spec on env and compares the outcome with tc.
func check(ctx context.Context, t *testing.T, env *controlplane.Env, ns string, tc admissionCase) {
	t.Helper()
	c, rec, err := catalogClient(env, ns)
	require.NoError(t, err)
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if tc.strict {
		opts.FieldValidation = metav1.FieldValidationStrict
	}
	const name = "catalog"
	got, err := c.Create(ctx, catalogSource(name, tc.spec), opts)
	if want := tc.wantError(name); want != "" {
		require.Error(t, err, "the API server admitted the spec")
		assert.Equal(t, want, err.Error())
		wantReason := metav1.StatusReasonInvalid // the policy sets reason: Invalid
		if tc.strict {
			wantReason = metav1.StatusReasonBadRequest
		}
		assert.Equal(t, wantReason, apierrors.ReasonForError(err))
	} else {
		require.NoError(t, err)
		want := tc.stored
		if want == nil {
			want = tc.spec
		}
		if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
			t.Errorf("stored spec (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(tc.wantWarnings(), rec.list()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

const (
	image   = "quay.io/operatorhubio/catalog:latest"
	address = "registry.olm.svc:50051"
)

var podConfig = map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "linux"}}

// upstreamCases run against OLM's upstream CatalogSource CRD.
var upstreamCases = []admissionCase{
	{
		name: "legacy grpc with an image is accepted without a warning",
		spec: map[string]any{"sourceType": "grpc", "image": image},
	},
	{
		name: "legacy grpc with an address is accepted without a warning",
		spec: map[string]any{"sourceType": "grpc", "address": address},
	},
	{
		name: "legacy configmap with a ConfigMap is accepted without a warning",
		spec: map[string]any{"sourceType": "configmap", "configMap": "catalog"},
	},
	{
		name: "legacy internal with a ConfigMap is accepted without a warning",
		spec: map[string]any{"sourceType": "internal", "configMap": "catalog"},
	},
	{
		name: "legacy grpc image with grpcPodConfig is accepted without a warning",
		spec: map[string]any{"sourceType": "grpc", "image": image, "grpcPodConfig": podConfig, "displayName": "Community"},
	},
	{
		name:       "legacy grpc without image or address is rejected",
		spec:       map[string]any{"sourceType": "grpc"},
		violations: []string{"spec.address: spec.sourceType grpc needs spec.address or spec.image: set it — or better remove spec.sourceType and use a structured source"},
	},
	{
		name:       "legacy configmap without a ConfigMap is rejected",
		spec:       map[string]any{"sourceType": "configmap"},
		violations: []string{"spec.configMap: spec.sourceType configmap needs spec.configMap: set it — or better remove spec.sourceType and use a structured source"},
	},
	{
		name:       "an unknown sourceType is rejected",
		spec:       map[string]any{"sourceType": "helm", "image": image},
		violations: []string{`spec.sourceType: is "helm", which OLM does not know: use grpc, configmap or internal — or better remove it and use spec.catalogImageSource, spec.catalogServiceSource or spec.configMapSource`},
	},
	{
		name:       "legacy grpc with both image and address is rejected",
		spec:       map[string]any{"sourceType": "grpc", "image": image, "address": address},
		violations: []string{"spec.address: is ignored because spec.image is also set (OLM runs the image and never dials the address): remove one of them"},
	},
	{
		name:       "legacy grpc with a ConfigMap beside its image is rejected",
		spec:       map[string]any{"sourceType": "grpc", "image": image, "configMap": "catalog"},
		violations: []string{"spec.configMap: is not used with spec.sourceType grpc: remove it"},
	},
	{
		name: "legacy configmap with image and address instead of a ConfigMap is rejected with every violation",
		spec: map[string]any{"sourceType": "configmap", "image": image, "address": address},
		violations: []string{
			"spec.configMap: spec.sourceType configmap needs spec.configMap: set it — or better remove spec.sourceType and use a structured source",
			"spec.image: is not used with spec.sourceType configmap: remove it",
			"spec.address: is not used with spec.sourceType configmap: remove it",
		},
	},
	{
		name:       "legacy grpc address with grpcPodConfig is rejected",
		spec:       map[string]any{"sourceType": "grpc", "address": address, "grpcPodConfig": podConfig},
		violations: []string{"spec.grpcPodConfig: is only used with spec.sourceType grpc and spec.image, where OLM runs the registry pod it configures: remove it"},
	},
	{
		name:       "an empty sourceType and no source is rejected",
		spec:       map[string]any{"sourceType": "", "displayName": "Nothing"},
		violations: []string{"spec: no catalog source is configured: set exactly one of spec.catalogImageSource.catalogImage (a registry image), spec.catalogServiceSource.address (host:port of a running registry) or spec.configMapSource.configMap (a ConfigMap name)"},
	},
	{
		name:       "an image with an empty sourceType is rejected",
		spec:       map[string]any{"sourceType": "", "image": image},
		violations: []string{"spec.image: is set but spec.sourceType is not, so OLM ignores it: set spec.sourceType: grpc, or better move it to spec.catalogImageSource.catalogImage"},
	},
	{
		name:          "a structured source alone is rejected by the upstream CRD, which drops it and requires sourceType",
		spec:          map[string]any{"catalogImageSource": map[string]any{"catalogImage": image}},
		schemaError:   `CatalogSource.operators.coreos.com "catalog" is invalid: spec.sourceType: Required value`,
		otherWarnings: []string{`unknown field "spec.catalogImageSource"`},
	},
	{
		name:          "a structured source beside a legacy one is dropped by the upstream CRD before admission sees it",
		spec:          map[string]any{"sourceType": "grpc", "image": image, "catalogImageSource": map[string]any{"catalogImage": image}},
		otherWarnings: []string{`unknown field "spec.catalogImageSource"`},
		stored:        map[string]any{"sourceType": "grpc", "image": image},
	},
	{
		name:        "a structured source beside a legacy one is rejected by the upstream CRD under strict field validation",
		spec:        map[string]any{"sourceType": "grpc", "image": image, "catalogImageSource": map[string]any{"catalogImage": image}},
		strict:      true,
		schemaError: `CatalogSource in version "v1alpha1" cannot be handled as a CatalogSource: strict decoding error: unknown field "spec.catalogImageSource"`,
	},
}

func TestCatalogSourceAdmissionOnTheUpstreamCRD(t *testing.T) {
	ctx := t.Context()
	ns, err := namespace(ctx, upstream, "upstream")
	require.NoError(t, err)
	c, _, err := catalogClient(upstream, ns)
	require.NoError(t, err)

	// What OLM's CRD alone lets through: every spec the policy denies.
	t.Run("without the policies the CRD admits", func(t *testing.T) {
		for _, tc := range upstreamCases {
			if len(tc.violations) == 0 {
				continue
			}
			what, _, _ := strings.Cut(tc.name, " is rejected")
			t.Run(what, func(t *testing.T) {
				check(ctx, t, upstream, ns, admissionCase{spec: tc.spec})
			})
		}
	})
	// An invalid CatalogSource from before the policies, for the ratchet below.
	_, err = c.Create(ctx, catalogSource("before-policies", map[string]any{"sourceType": "grpc"}), metav1.CreateOptions{})
	require.NoError(t, err)

	require.NoError(t, applyPoliciesOnce(ctx, upstream))
	for _, tc := range upstreamCases {
		t.Run(tc.name, func(t *testing.T) {
			check(ctx, t, upstream, ns, tc)
		})
	}

	t.Run("an invalid CatalogSource from before the policies keeps its metadata writable but not its spec", func(t *testing.T) {
		old, err := c.Get(ctx, "before-policies", metav1.GetOptions{})
		require.NoError(t, err)
		old.SetLabels(map[string]string{"team": "catalogs"})
		old.SetFinalizers([]string{"example.com/cleanup"})
		updated, err := c.Update(ctx, old, metav1.UpdateOptions{})
		require.NoError(t, err, "a metadata-only update must pass")

		updated.Object["spec"] = map[string]any{"sourceType": "grpc", "displayName": "Still none"}
		_, err = c.Update(ctx, updated, metav1.UpdateOptions{})
		require.Error(t, err, "a spec change must be checked")
		assert.Contains(t, err.Error(), "spec.sourceType grpc needs spec.address or spec.image")

		// A deletion still completes: the object is marked, its finalizer comes off, it goes.
		require.NoError(t, c.Delete(ctx, "before-policies", metav1.DeleteOptions{}))
		current, err := c.Get(ctx, "before-policies", metav1.GetOptions{})
		require.NoError(t, err)
		require.NotNil(t, current.GetDeletionTimestamp())
		current.SetFinalizers(nil)
		_, err = c.Update(ctx, current, metav1.UpdateOptions{})
		require.NoError(t, err, "removing the finalizer must pass")
		_, err = c.Get(ctx, "before-policies", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "want the CatalogSource gone, got %v", err)
	})
}

// The same policies, on the same API server, warn once the CatalogSource CRD serves the
// structured sources: the deprecated policy reads the CRD, not a setting, so replacing OLM's
// CRD with Tollgate's (config/crd/olm) is all it takes, and the silence above is the policy's
// choice rather than a policy not yet loaded.
func TestTheDeprecationWarningFollowsTheServedCRD(t *testing.T) {
	ctx := t.Context()
	ns, err := namespace(ctx, upstream, "served")
	require.NoError(t, err)
	require.NoError(t, applyPoliciesOnce(ctx, upstream))
	legacy := admissionCase{spec: map[string]any{"sourceType": "grpc", "image": image}}
	check(ctx, t, upstream, ns, legacy)

	const name = "catalogsources.operators.coreos.com"
	crd := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		return u
	}
	original := crd()
	require.NoError(t, upstream.Client.Get(ctx, client.ObjectKey{Name: name}, original))
	raw, err := os.ReadFile(repo.Path("config", "crd", "olm", "operators.coreos.com_catalogsources.yaml"))
	require.NoError(t, err)
	ours := crd()
	require.NoError(t, yaml.Unmarshal(raw, &ours.Object))
	serve := func(ctx context.Context, spec any) {
		t.Helper()
		current := crd()
		require.NoError(t, upstream.Client.Get(ctx, client.ObjectKey{Name: name}, current))
		current.Object["spec"] = spec
		require.NoError(t, upstream.Client.Update(ctx, current))
	}
	serve(ctx, ours.Object["spec"])
	t.Cleanup(func() { serve(context.Background(), original.Object["spec"]) })

	legacy.deprecated = []string{"sourceType", "image"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cl, rec, err := catalogClient(upstream, ns)
		require.NoError(c, err)
		_, err = cl.Create(ctx, catalogSource("catalog", legacy.spec), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		require.NoError(c, err)
		assert.Equal(c, legacy.wantWarnings(), rec.list())
	}, time.Minute, 200*time.Millisecond, "the deprecated policy warns once the CRD serves the structured sources")
}

// oursCases run against Tollgate's CRD (config/crd/olm), which keeps the structured sources.
var oursCases = []admissionCase{
	{
		name: "a catalogImageSource with pod overrides is accepted without warnings",
		spec: map[string]any{"catalogImageSource": map[string]any{"catalogImage": image, "podSpecOverrides": podConfig}},
	},
	{
		name: "a catalogServiceSource is accepted without warnings",
		spec: map[string]any{"catalogServiceSource": map[string]any{"address": address}},
	},
	{
		name: "a configMapSource is accepted without warnings",
		spec: map[string]any{"configMapSource": map[string]any{"configMap": "catalog"}},
	},
	{
		name:       "a legacy grpc image is accepted with deprecation warnings",
		spec:       map[string]any{"sourceType": "grpc", "image": image},
		deprecated: []string{"sourceType", "image"},
	},
	{
		name:       "a catalogImageSource without its image is rejected by the policy",
		spec:       map[string]any{"catalogImageSource": map[string]any{}},
		violations: []string{"spec.catalogImageSource.catalogImage: is required when spec.catalogImageSource is set: give an operator-registry image, e.g. quay.io/operatorhubio/catalog:latest"},
	},
	{
		name:       "a catalogServiceSource without its address is rejected by the policy",
		spec:       map[string]any{"catalogServiceSource": map[string]any{}},
		violations: []string{"spec.catalogServiceSource.address: is required when spec.catalogServiceSource is set: give host:port of a running registry service"},
	},
	{
		name:       "a configMapSource without its ConfigMap is rejected by the policy",
		spec:       map[string]any{"configMapSource": map[string]any{"configMap": ""}},
		violations: []string{"spec.configMapSource.configMap: is required when spec.configMapSource is set: give the name of a ConfigMap in the catalog's namespace"},
	},
	{
		name:        "two structured sources are rejected by the CRD before admission",
		spec:        map[string]any{"catalogImageSource": map[string]any{"catalogImage": image}, "configMapSource": map[string]any{"configMap": "catalog"}},
		schemaError: `CatalogSource.operators.coreos.com "catalog" is invalid: spec: Invalid value: "object": set exactly one of catalogImageSource, catalogServiceSource, configMapSource, or the legacy sourceType`,
	},
}

func TestCatalogSourceAdmissionOnTollgatesCRD(t *testing.T) {
	ctx := t.Context()
	ns, err := namespace(ctx, ours, "ours")
	require.NoError(t, err)
	for _, tc := range oursCases {
		t.Run(tc.name, func(t *testing.T) {
			check(ctx, t, ours, ns, tc)
		})
	}
}
