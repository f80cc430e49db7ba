package policysource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
)

// Labels and annotations of policy ConfigMaps.
const (
	// Label marks a ConfigMap as policy: KindRego (each key a module) or KindData (each key a
	// JSON or YAML object merged under data.tollgate.config).
	Label = "tollgate.dev/policy"
	// StatusAnnotation is where Tollgate says whether a ConfigMap's policy is in service.
	StatusAnnotation = "tollgate.dev/policy-status"

	KindRego = "rego"
	KindData = "data"

	// DefaultNamespace is where the policy ConfigMaps live unless the manager is told
	// otherwise (--policy-namespace; the manager's own namespace when it runs in a pod).
	DefaultNamespace = "tollgate-system"
)

// Status is the value of the StatusAnnotation.
type Status struct {
	Status string                    `json:"status"` // ok or error
	Errors []engine.CompileErrorItem `json:"errors,omitempty"`
	// Serving says which version of the ConfigMap's policy is in service: ServingCurrent,
	// ServingPrevious (its last good version: the current one is rejected) or ServingNone.
	Serving string `json:"serving,omitempty"`
	// ServingDigest is the Digest of the version in service (the current or the last good
	// one); empty when none is, and in annotations written before it was recorded. tollgate
	// explain compares it with the version it reads.
	ServingDigest string `json:"servingDigest,omitempty"`
}

// Digest identifies one version of a policy ConfigMap: 12 hex digits of a sha256 over what
// Assemble reads from it, its Label value and its data keys and values. Equal versions have
// equal digests, whatever the ConfigMap's other metadata.
func Digest(cm corev1.ConfigMap) string {
	h := sha256.New()
	write := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	write(cm.Labels[Label])
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		write(k)
		write(cm.Data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// StatusOf reads cm's StatusAnnotation: nil when it has none, an error when it is not JSON.
func StatusOf(cm corev1.ConfigMap) (*Status, error) {
	raw, ok := cm.Annotations[StatusAnnotation]
	if !ok {
		return nil, nil
	}
	var st Status
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, fmt.Errorf("the %s annotation of ConfigMap %s is not JSON: %w", StatusAnnotation, cm.Name, err)
	}
	return &st, nil
}

// Set is a candidate policy set, with where each part came from.
type Set struct {
	// Options are the base options plus the ConfigMaps' modules and data.
	Options engine.Options
	// ConfigMaps are the labelled ConfigMaps read, sorted by name.
	ConfigMaps []corev1.ConfigMap
	// Origin maps a module path to the ConfigMap it came from.
	Origin map[string]string
	// Problems keep the set out of service, by ConfigMap name; "" is an OPA bundle.
	Problems map[string][]engine.CompileErrorItem
}

// Read reads the ConfigMaps labelled Label in namespace through r and adds them to base (see
// Assemble).
func Read(ctx context.Context, r client.Reader, namespace string, base engine.Options) (*Set, error) {
	cms, err := List(ctx, r, namespace)
	if err != nil {
		return nil, err
	}
	return Assemble(base, cms), nil
}

// List reads the ConfigMaps labelled Label in namespace, sorted by name.
func List(ctx context.Context, r client.Reader, namespace string) ([]corev1.ConfigMap, error) {
	list := &corev1.ConfigMapList{}
	if err := r.List(ctx, list, client.InNamespace(namespace), client.HasLabels{Label}); err != nil {
		return nil, fmt.Errorf("list policy configmaps in %s: %w", namespace, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// Assemble adds the policy ConfigMaps cms (sorted by name) to base: a "rego" key named like an
// embedded file replaces it, other keys become configmap/<name>/<key>; "data" keys go under
// data.tollgate.config. A data value that does not parse is a problem of its ConfigMap.
func Assemble(base engine.Options, cms []corev1.ConfigMap) *Set {
	s := &Set{Options: base, ConfigMaps: cms, Origin: map[string]string{}, Problems: map[string][]engine.CompileErrorItem{}}
	if s.Options.Policies == nil {
		s.Options.Policies = policies.FS
	}
	s.Options.Modules = slices.Clone(base.Modules)
	data := map[string]any{}
	for _, cm := range cms {
		switch kind := cm.Labels[Label]; kind {
		case KindRego:
			s.addModules(cm)
		case KindData:
			s.addData(cm, data)
		default:
			s.problem(cm.Name, engine.CompileErrorItem{
				Message: fmt.Sprintf("label %s=%q: use %q (Rego modules) or %q (data)", Label, kind, KindRego, KindData)})
		}
	}
	s.Options.Data = data
	return s
}

func (s *Set) problem(name string, item engine.CompileErrorItem) {
	s.Problems[name] = append(s.Problems[name], item)
}

func (s *Set) addModules(cm corev1.ConfigMap) {
	embedded := embeddedPaths()
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		p := "configmap/" + cm.Name + "/" + k
		if e, ok := embedded[k]; ok { // a key named like an embedded file replaces it
			p = e
		}
		if other, dup := s.Origin[p]; dup && other != cm.Name {
			s.problem(cm.Name, engine.CompileErrorItem{File: p, Message: fmt.Sprintf(
				"key %s replaces %s, which ConfigMap %s replaces too; replace an embedded file in one ConfigMap only", k, p, other)})
			continue
		}
		s.Origin[p] = cm.Name
		s.Options.Modules = append(s.Options.Modules, engine.Module{Path: p, Source: cm.Data[k]})
	}
}

// addData merges each key, a JSON or YAML document (as kubectl create configmap --from-file
// makes it), into data; a top-level key set differently twice is a problem.
func (s *Set) addData(cm corev1.ConfigMap, data map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(cm.Data[k]), &doc); err != nil {
			s.problem(cm.Name, engine.CompileErrorItem{File: k, Message: "not a JSON or YAML object: " + err.Error()})
			continue
		}
		for _, top := range slices.Sorted(maps.Keys(doc)) {
			if prev, dup := data[top]; dup && !equality.Semantic.DeepEqual(prev, doc[top]) {
				s.problem(cm.Name, engine.CompileErrorItem{File: k,
					Message: fmt.Sprintf("%q is also set, differently, by another policy data key or ConfigMap; set it in one place", top)})
				continue
			}
			data[top] = doc[top]
		}
	}
}

// Compile compiles the set in strict mode when it has no problems yet. A compile error is
// turned into problems of the sources it belongs to and the engine is nil; the error is
// for anything else.
func (s *Set) Compile(ctx context.Context) (*engine.Engine, error) {
	if len(s.Problems) > 0 {
		return nil, nil
	}
	e, err := engine.New(ctx, s.Options)
	var compileErr *engine.CompileError
	if errors.As(err, &compileErr) {
		for _, item := range compileErr.Items {
			for _, name := range s.blame(item) {
				s.problem(name, item)
			}
		}
		return nil, nil
	}
	return e, err
}

// Failure summarises what keeps the set out of service, or nil when nothing does.
func (s *Set) Failure() error {
	if len(s.Problems) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(s.Problems))
	for i, name := range names {
		if name == "" {
			names[i] = "an OPA bundle"
		}
	}
	return fmt.Errorf("the admin policy does not compile (%s; see the %s annotation)", strings.Join(names, ", "), StatusAnnotation)
}

// blame names the sources an error belongs to: the ConfigMap of the module it is in; else
// (an error located in an embedded module, such as a rule a ConfigMap module conflicts
// with) every Rego ConfigMap when no bundle is loaded, since the embedded set compiles on
// its own; else the bundles, named "".
func (s *Set) blame(item engine.CompileErrorItem) []string {
	if name, ok := s.Origin[item.File]; ok {
		return []string{name}
	}
	if len(s.Options.Bundles) > 0 {
		return []string{""}
	}
	var names []string
	for _, cm := range s.ConfigMaps {
		if cm.Labels[Label] == KindRego {
			names = append(names, cm.Name)
		}
	}
	if len(names) == 0 {
		return []string{""}
	}
	return names
}

// embeddedPaths maps the file name of each embedded module to its path, so a ConfigMap
// key "upgrade.rego" replaces "upgrade/upgrade.rego" (ConfigMap keys cannot hold "/").
func embeddedPaths() map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".rego") && !strings.HasSuffix(p, "_test.rego") {
			out[path.Base(p)] = p
		}
		return nil
	})
	return out
}
