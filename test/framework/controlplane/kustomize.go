package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// Kustomize builds a kustomization folder (relative to the repository root unless absolute)
// with the kustomize of go.mod's tool directives, as `make verify` does, and returns its
// objects.
func Kustomize(dir string) ([]*unstructured.Unstructured, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("kustomize runs as `go tool kustomize`: %w", err)
	}
	if !filepath.IsAbs(dir) {
		dir = repo.Path(dir)
	}
	// The go found on PATH builds a folder of this repository: test code, no user input.
	cmd := exec.Command(goBin, "tool", "kustomize", "build", dir) //nolint:gosec // see above

	cmd.Dir = repo.Root()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	objs, err := DecodeYAML(out)
	if err != nil {
		return nil, fmt.Errorf("decode kustomize build %s: %w", dir, err)
	}
	return objs, nil
}

// DecodeYAML reads multi-document YAML (or JSON) into objects, skipping empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}
