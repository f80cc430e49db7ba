package manager

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
)

// Defaults of the OLM v1 flags: those of package catalogd.
const (
	defaultCatalogFetchTimeout = time.Minute
	defaultCatalogsKept        = 8
)

// caFileEnv is the default of --catalogd-ca-file: where the manager's arguments cannot be
// changed (installed by OLM, whose Subscription sets env and volumes only), the CA still can.
const caFileEnv = "TOLLGATE_CATALOGD_CA_FILE"

// olmFlags say which OLM the manager gates, and how it reads OLM v1's catalogs.
type olmFlags struct {
	mode         string
	caFile       string
	fetchTimeout time.Duration
	kept         int
	heldRecheck  time.Duration
}

func (f *olmFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "olm", olmAuto, "which OLM to gate: auto (each one the API server serves), v0 (Subscriptions: UpgradeGates), v1 (ClusterExtensions: ExtensionGates) or both; the manager does not start when one asked for is not served")
	fs.StringVar(&f.caFile, "catalogd-ca-file", os.Getenv(caFileEnv), "PEM file of the CA that signed catalogd's serving certificate (OLM v1), mounted from a Secret or ConfigMap and read again when it changes; empty trusts the system's roots; $"+caFileEnv+" sets its default")
	fs.DurationVar(&f.fetchTimeout, "catalog-fetch-timeout", defaultCatalogFetchTimeout, "deadline of one read of a ClusterCatalog's content from catalogd (OLM v1); a catalog not read holds its extensions' upgrades")
	fs.IntVar(&f.kept, "catalogs-kept", defaultCatalogsKept, "how many ClusterCatalogs' content (OLM v1) stays in memory, the least recently used dropped first; content is read once per digest")
	fs.DurationVar(&f.heldRecheck, "held-recheck", controllers.DefaultHeldRecheck, "how often an ExtensionGate holding an upgrade is decided again without a change it watches: a ClusterCatalog whose content could not be read is read again then")
}

// catalogs checks the flags and returns the client that reads catalogd's content.
func (f *olmFlags) catalogs() (*catalogd.Client, error) {
	if err := checkOLM(f.mode); err != nil {
		return nil, err
	}
	switch {
	case f.fetchTimeout <= 0:
		return nil, fmt.Errorf("invalid --catalog-fetch-timeout %s: it must be positive", f.fetchTimeout)
	case f.kept < 1:
		return nil, fmt.Errorf("invalid --catalogs-kept %d: at least 1", f.kept)
	case f.heldRecheck <= 0:
		return nil, fmt.Errorf("invalid --held-recheck %s: it must be positive", f.heldRecheck)
	}
	opts := catalogd.Options{Timeout: f.fetchTimeout, Keep: f.kept}
	if f.caFile != "" {
		t, err := newCATransport(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("invalid --catalogd-ca-file: %w", err)
		}
		opts.HTTP = &http.Client{Transport: t}
	}
	return catalogd.New(opts), nil
}
