package admission

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/tollgate-dev/tollgate/test/controlplane"
)

// kustomize builds a kustomization folder (relative to the repository root) with the
// kustomize of go.mod's tool directives, as `make verify` does.
func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("kustomize runs as `go tool kustomize`: %w", err)
	}
	cmd := exec.Command(goBin, "tool", "kustomize", "build", filepath.Join(controlplane.RepoRoot(), dir))
	cmd.Dir = controlplane.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode kustomize build %s: %w", dir, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}
