package controllers

import (
	"context"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine"
)

// PolicySources is the candidate policy set the manager would compile from the policy
// ConfigMaps of one namespace, for the CLI (explain, eval on a snapshot).
type PolicySources struct {
	// Options are base plus the ConfigMaps' modules and data, exactly as the manager builds them.
	Options engine.Options
	// ConfigMaps are the names of the labelled ConfigMaps read, sorted.
	ConfigMaps []string
	// Problems are what keeps a ConfigMap out of service before compiling (data that does not
	// parse, an unknown label value), by ConfigMap name.
	Problems map[string][]engine.CompileErrorItem
	// Origin maps a module path to the ConfigMap it came from, to name the ConfigMap of a
	// compile error.
	Origin map[string]string
}

// ReadPolicySources reads the ConfigMaps labelled PolicyLabel in namespace through r (a live
// client or a snapshot) with the manager's conventions: a "rego" key named like an embedded
// file replaces it, other keys become configmap/<name>/<key>; "data" keys go under
// data.tollgate.config. base carries the timeout, base policies and bundles.
func ReadPolicySources(ctx context.Context, r client.Reader, namespace string, base engine.Options) (*PolicySources, error) {
	pr := &PolicyReconciler{Client: readerClient{r: r}, Namespace: namespace, Base: base}
	cand, err := pr.candidate(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(cand.maps))
	for _, cm := range cand.maps {
		names = append(names, cm.Name)
	}
	sort.Strings(names)
	return &PolicySources{Options: cand.opts, ConfigMaps: names, Problems: cand.errors, Origin: cand.origin}, nil
}

// readerClient lets the PolicyReconciler's reading code run on a plain client.Reader: only
// Get and List are ever called on it.
type readerClient struct {
	client.Client
	r client.Reader
}

func (c readerClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.r.Get(ctx, key, obj, opts...)
}

func (c readerClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.r.List(ctx, list, opts...)
}
