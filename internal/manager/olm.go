package manager

import (
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// The values of --olm: which OLM the manager gates.
const (
	olmAuto = "auto" // whatever the API server serves
	olmV0   = "v0"   // Subscriptions and InstallPlans (UpgradeGates)
	olmV1   = "v1"   // ClusterExtensions (ExtensionGates)
	olmBoth = "both"
)

// kind is an API kind the manager needs served, named as an admin reads it.
type kind struct{ groupVersion, kind string }

func (k kind) String() string { return k.kind + " (" + k.groupVersion + ")" }

// The kinds that say which OLM a cluster runs, and the gates Tollgate keeps for each.
var (
	subscription     = kind{"operators.coreos.com/v1alpha1", "Subscription"}
	clusterExtension = kind{"olm.operatorframework.io/v1", "ClusterExtension"}
	clusterCatalog   = kind{"olm.operatorframework.io/v1", "ClusterCatalog"}
	upgradeGate      = kind{"tollgate.dev/v1alpha1", "UpgradeGate"}
	extensionGate    = kind{"tollgate.dev/v1alpha1", "ExtensionGate"}
)

// served is the set of those kinds the API server serves.
type served map[kind]bool

// olmChoice is which OLM the manager gates: v0 (Subscriptions), v1 (ClusterExtensions), or both.
type olmChoice struct{ v0, v1 bool }

// checkOLM checks a value of --olm.
func checkOLM(mode string) error {
	switch mode {
	case olmAuto, olmV0, olmV1, olmBoth:
		return nil
	}
	return fmt.Errorf("invalid --olm %q: use auto, v0, v1 or both", mode)
}

// resourceLister is the part of a discovery client detection uses.
type resourceLister interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// discover asks the API server which of the kinds it serves. A group version it does not
// serve serves none of them; any other error is returned.
func discover(d resourceLister) (served, error) {
	out := served{}
	asked := map[string]bool{}
	for _, k := range []kind{subscription, clusterExtension, clusterCatalog, upgradeGate, extensionGate} {
		if asked[k.groupVersion] {
			continue
		}
		asked[k.groupVersion] = true
		list, err := d.ServerResourcesForGroupVersion(k.groupVersion)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discover which OLM the cluster serves: %s: %w", k.groupVersion, err)
		}
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") { // a subresource names its parent's kind
				out[kind{k.groupVersion, r.Kind}] = true
			}
		}
	}
	return out, nil
}

// discoverOLM asks the API server of cfg which kinds it serves, within 30 seconds.
func discoverOLM(cfg *rest.Config) (served, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 30 * time.Second
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discover which OLM the cluster serves: %w", err)
	}
	return discover(d)
}

// chooseOLM is what mode (a checked --olm) gates on a cluster that serves s: auto, each OLM
// served; v0, v1 or both, those, which must be served. An OLM gated needs its gate's CRD.
func chooseOLM(mode string, s served) (olmChoice, error) {
	hasV0, hasV1 := s[subscription], s[clusterExtension]
	c := olmChoice{v0: mode == olmV0 || mode == olmBoth, v1: mode == olmV1 || mode == olmBoth}
	if mode == olmAuto {
		if !hasV0 && !hasV1 {
			return c, fmt.Errorf("the API server serves neither OLM v0 (%s) nor OLM v1 (%s): Tollgate gates OLM's upgrades and does not install OLM; install OLM first", subscription, clusterExtension)
		}
		c = olmChoice{v0: hasV0, v1: hasV1}
	}
	if c.v0 {
		if err := need(s, "gating OLM v0", subscription, upgradeGate); err != nil {
			return c, err
		}
	}
	if c.v1 {
		if err := need(s, "gating OLM v1", clusterExtension, clusterCatalog, extensionGate); err != nil {
			return c, err
		}
	}
	return c, nil
}

// need fails, naming every kind missing and what provides it, unless s serves them all.
func need(s served, what string, kinds ...kind) error {
	var missing []string
	for _, k := range kinds {
		if !s[k] {
			missing = append(missing, k.String()+" from "+provider(k))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s needs what the API server does not serve: %s; install it, or choose what --olm gates (auto gates what is served)", what, strings.Join(missing, ", "))
}

// provider says what installs k.
func provider(k kind) string {
	switch k {
	case subscription:
		return "OLM v0"
	case clusterExtension:
		return "OLM v1's operator-controller"
	case clusterCatalog:
		return "OLM v1's catalogd"
	}
	return "Tollgate's CRDs (config/crd)"
}

// String is the choice as the log says it.
func (c olmChoice) String() string {
	switch {
	case c.v0 && c.v1:
		return "OLM v0 and OLM v1"
	case c.v1:
		return "OLM v1"
	default:
		return "OLM v0"
	}
}
