package policysource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// maxConfigMapFile bounds a file ReadConfigMapFile reads: a ConfigMap holds at most 1 MiB.
const maxConfigMapFile = 16 << 20

// ReadConfigMapFile reads the policy ConfigMaps of a YAML or JSON file (one or more
// documents, at most 16 MiB), as the manager would find them in namespace: each a v1 ConfigMap
// with a name and the policy label, in namespace or in none (then put in it).
func ReadConfigMapFile(path, namespace string) ([]corev1.ConfigMap, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = file.Close() }()
	data, err := io.ReadAll(io.LimitReader(file, maxConfigMapFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigMapFile {
		return nil, fmt.Errorf("%s is larger than %d MiB: nothing of it is read", path, maxConfigMapFile>>20)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []corev1.ConfigMap
	for doc := 1; ; doc++ {
		var cm corev1.ConfigMap
		err := dec.Decode(&cm)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		if cm.Kind == "" && cm.Name == "" && len(cm.Data) == 0 {
			continue // an empty document
		}
		if err := checkConfigMap(&cm, namespace); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		out = append(out, cm)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no ConfigMap", path)
	}
	return out, nil
}

// checkConfigMap refuses what the manager would not read as a policy ConfigMap in namespace.
func checkConfigMap(cm *corev1.ConfigMap, namespace string) error {
	switch {
	case cm.APIVersion != "v1" || cm.Kind != "ConfigMap":
		return fmt.Errorf("a %s %q, not a v1 ConfigMap", cm.Kind, cm.APIVersion)
	case cm.Name == "":
		return errors.New("the ConfigMap has no metadata.name")
	case cm.Namespace != "" && cm.Namespace != namespace:
		return fmt.Errorf("ConfigMap %s is in namespace %s, but the policy ConfigMaps are in %s (--policy-namespace)", cm.Name, cm.Namespace, namespace)
	case cm.Labels[Label] == "":
		return fmt.Errorf("ConfigMap %s has no label %s (rego or data): the manager would not read it", cm.Name, Label)
	}
	cm.Namespace = namespace
	return nil
}
