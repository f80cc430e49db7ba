package policysource

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/engine"
)

func TestDigestIdentifiesTheVersionAssembleReads(t *testing.T) {
	cm := policyCM("site", KindRego, map[string]string{"a.rego": "package a\n", "b.rego": "package b\n"})
	d := Digest(cm)
	assert.Regexp(t, `^[0-9a-f]{12}$`, d)

	other := *cm.DeepCopy()
	other.Annotations = map[string]string{StatusAnnotation: `{"status":"ok"}`}
	other.ResourceVersion, other.Namespace = "42", "elsewhere"
	assert.Equal(t, d, Digest(other), "metadata other than the policy label is not part of the version")

	for name, change := range map[string]func(*corev1.ConfigMap){
		"a value":            func(c *corev1.ConfigMap) { c.Data["a.rego"] = "package a2\n" },
		"a key":              func(c *corev1.ConfigMap) { c.Data["c.rego"] = c.Data["b.rego"]; delete(c.Data, "b.rego") },
		"the kind":           func(c *corev1.ConfigMap) { c.Labels[Label] = KindData },
		"a key/value border": func(c *corev1.ConfigMap) { c.Data = map[string]string{"a.regopackage a\n": ""} },
	} {
		changed := *cm.DeepCopy()
		change(&changed)
		assert.NotEqual(t, d, Digest(changed), name)
	}
}

func TestStatusAnnotationCarriesTheServingDigest(t *testing.T) {
	st := Status{Status: "error", Serving: ServingPrevious, ServingDigest: "0123456789ab",
		Errors: []engine.CompileErrorItem{{File: "configmap/site/site.rego", Row: 3, Message: "rego_parse_error"}}}
	raw, err := json.Marshal(st)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"servingDigest":"0123456789ab"`)

	cm := policyCM("site", KindRego, nil)
	cm.Annotations = map[string]string{StatusAnnotation: string(raw)}
	got, err := StatusOf(cm)
	require.NoError(t, err)
	assert.Equal(t, &st, got)

	cm.Annotations[StatusAnnotation] = `{"status":"ok","serving":"current"}` // written before the digest was recorded
	got, err = StatusOf(cm)
	require.NoError(t, err)
	assert.Equal(t, &Status{Status: "ok", Serving: ServingCurrent}, got)
	ok, err := json.Marshal(Status{Status: "ok", Serving: ServingNone})
	require.NoError(t, err)
	assert.NotContains(t, string(ok), "servingDigest", "optional: left out when nothing is served")

	cm.Annotations[StatusAnnotation] = "{"
	_, err = StatusOf(cm)
	assert.ErrorContains(t, err, "is not JSON")

	delete(cm.Annotations, StatusAnnotation)
	got, err = StatusOf(cm)
	require.NoError(t, err)
	assert.Nil(t, got, "no annotation: the manager has not reported on it")
}
