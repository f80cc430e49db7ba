package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

type snapshotFlags struct {
	cluster  kubeconn.Flags
	all      bool
	globalNS string
	policyNS string
	output   *printers.PrintFlags
}

func newSnapshotCommand() *cobra.Command {
	f := snapshotFlags{output: printers.NewPrintFlags("yaml", "json", "name")}
	cmd := &cobra.Command{
		Use:   "snapshot [-n NAMESPACE | -A]",
		Short: "Write the cluster state Tollgate decides on, for tollgate eval or a bug report",
		Long: `Read from the live cluster everything Tollgate's decisions rest on and write it to stdout as
multi-document YAML (or a JSON List with -o json): Subscriptions, ClusterServiceVersions,
InstallPlans, OperatorGroups, OperatorConditions and UpgradeGates of the namespace (or of all
namespaces with -A), the CatalogSources visible there (the namespace's and the global catalog
namespace's), the operands of the installed CSVs, the PackageManifests the Subscriptions use,
and the policy ConfigMaps; on a cluster with OLM v1, every ClusterCatalog, ClusterExtension and
ExtensionGate, each served catalog's content (a CatalogContent, read through the API server's
proxy to catalogd: get services/proxy in catalogd's namespace) and the extensions' operands.
Every object has apiVersion and kind; managedFields and the
last-applied annotation are dropped. Copied CSVs (OLM's copies in other namespaces) are left
out. Progress goes to stderr.

'tollgate eval --snapshot' and 'tollgate explain --snapshot' read the result.`,
		Example: `  # the state of one namespace, to attach to a bug report
  tollgate snapshot -n operators > state.yaml

  # the whole cluster, then evaluate it offline with your own policy changes
  tollgate snapshot -A > cluster.yaml
  tollgate eval --snapshot cluster.yaml --policy-dir policy/

  # what a snapshot of the namespace would hold, one kind/name a line
  tollgate snapshot -n operators -o name`,
		Args: cobra.NoArgs,
		RunE: runs(f.run),
	}
	f.cluster.AddFlags(cmd)
	f.cluster.AddAllNamespaces(cmd, &f.all, "snapshot every namespace")
	cmd.Flags().StringVar(&f.globalNS, "global-catalog-namespace", input.DefaultGlobalCatalogNamespace, "namespace whose CatalogSources every Subscription can use (always included)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) to include")
	f.output.AddFlags(cmd)
	return cmd
}

func (f *snapshotFlags) run(ctx context.Context, stdout, stderr io.Writer, _ []string) error {
	if err := f.output.Validate(); err != nil {
		return err
	}
	c, ns, cfg, err := f.cluster.Connect()
	if err != nil {
		return err
	}
	where := "namespace " + ns
	if f.all {
		where = "all namespaces"
	}
	fmt.Fprintf(stderr, "snapshot of %s from %s\n", where, cfg.Host)
	catalogs, err := kubeconn.NewCatalogs(cfg)
	if err != nil {
		return err
	}
	scope := snapshot.Scope{Namespace: ns, All: f.all, GlobalCatalogNamespace: f.globalNS, PolicyNamespace: f.policyNS, PolicyLabel: policysource.Label, Catalogs: catalogs}
	objs, err := snapshot.Capture(ctx, c, scope, stderr)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("tollgate snapshot of %s, taken %s", where, time.Now().UTC().Format(time.RFC3339))
	return f.output.Print(stdout, snapshot.Printable(objs, header))
}
