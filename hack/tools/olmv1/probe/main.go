//go:build olmv1probe

// Command probe answers with operator-controller's own code what OLM v1 would install. It is
// built inside a copy of operator-controller's module (make olmv1-probe), so it may use that
// module's internal packages: the catalog cache and client that read catalogd's content
// (catalogmetadata/cache, catalogmetadata/client), the catalog walker and the resolver with the
// validations cmd/operator-controller gives it (resolve).
//
// Each line of stdin is one world, a JSON object: the ClusterCatalogs (name, priority,
// availabilityMode, and content as catalogd serves it at /api/v1/all), a ClusterExtension's
// spec.source.catalog and its installed bundle (or null). Each line of stdout answers the
// world of the same line: the bundle OLM v1 resolves ({"bundle","version"}), or its error
// ({"error"}).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/cache"
	catalogclient "github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/client"
	"github.com/operator-framework/operator-controller/internal/operator-controller/resolve"
)

// world is one question.
type world struct {
	Catalogs []struct {
		Name             string `json:"name"`
		Priority         int32  `json:"priority"`
		AvailabilityMode string `json:"availabilityMode"`
		Content          string `json:"content"`
	} `json:"catalogs"`
	Catalog   ocv1.CatalogFilter   `json:"catalog"`
	Installed *ocv1.BundleMetadata `json:"installed"`
}

// answer is what OLM v1 resolves for a world.
type answer struct {
	Bundle  string `json:"bundle,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

func main() {
	log.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "olmv1-probe-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	fsCache := cache.NewFilesystemCache(dir)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for n := 0; in.Scan(); n++ {
		var w world
		a := answer{}
		if err := json.Unmarshal(in.Bytes(), &w); err != nil {
			a.Error = "probe: " + err.Error()
		} else {
			a = resolveWorld(fsCache, fmt.Sprintf("world-%d", n), w)
		}
		if err := out.Encode(a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// resolveWorld puts each catalog's content into the cache under the world's own ref, as
// operator-controller does when it fetches a catalog (a content error is cached, and returned
// for every package of it, as there), and resolves the extension over the catalogs, listed as
// the API server lists them (by name).
func resolveWorld(fsCache catalogclient.Cache, ref string, w world) answer {
	var catalogs []ocv1.ClusterCatalog
	for _, c := range w.Catalogs {
		_, _ = fsCache.Put(c.Name, ref, strings.NewReader(c.Content), nil)
		cat := ocv1.ClusterCatalog{}
		cat.Name = c.Name
		cat.Spec.Priority = c.Priority
		cat.Spec.AvailabilityMode = ocv1.AvailabilityMode(c.AvailabilityMode)
		cat.Status.ResolvedSource = &ocv1.ResolvedCatalogSource{Type: ocv1.SourceTypeImage, Image: &ocv1.ResolvedImageSource{Ref: ref}}
		meta.SetStatusCondition(&cat.Status.Conditions, metav1.Condition{Type: ocv1.TypeServing, Status: metav1.ConditionTrue, Reason: ocv1.ReasonAvailable})
		catalogs = append(catalogs, cat)
	}
	slices.SortFunc(catalogs, func(a, b ocv1.ClusterCatalog) int { return strings.Compare(a.Name, b.Name) })
	cc := catalogclient.New(fsCache, func() (*http.Client, error) { return nil, errors.New("the probe fetches nothing") })
	r := &resolve.CatalogResolver{
		WalkCatalogsFunc: resolve.CatalogWalker(func(context.Context, ...client.ListOption) ([]ocv1.ClusterCatalog, error) {
			return slices.Clone(catalogs), nil
		}, cc.GetPackage),
		Validations: []resolve.ValidationFunc{resolve.NoDependencyValidation},
	}
	ext := &ocv1.ClusterExtension{}
	ext.Spec.Source.SourceType = ocv1.SourceTypeCatalog
	ext.Spec.Source.Catalog = &w.Catalog
	b, v, _, err := r.Resolve(context.Background(), ext, w.Installed)
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{Bundle: b.Name, Version: v.String()}
}
