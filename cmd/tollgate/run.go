package main

import (
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
	"github.com/tollgate-dev/tollgate/internal/manager"
)

func newRunCommand() *cobra.Command {
	var (
		flags   manager.Flags
		cluster kubeconn.Flags
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the manager: gate every Subscription and gated ClusterExtension by what policy allows",
		Long: `Run the manager. It gates the OLM the API server serves (--olm auto): OLM v0, whose
InstallPlans it approves when the policies allow them, and OLM v1, whose ClusterExtensions
named by an ExtensionGate it pins to the highest version the policies allow. It reads OLM v1's
catalogs from catalogd over HTTPS, trusting the CA in --catalogd-ca-file.`,
		Example: `  # in a cluster (the Deployment in config/manager does this)
  tollgate run --leader-elect --policy-namespace tollgate-system

  # OLM v1 only, trusting the CA that signed catalogd's certificate (mounted from a Secret)
  tollgate run --leader-elect --olm v1 --catalogd-ca-file /etc/tollgate/catalogd/ca.crt

  # against a kubeconfig context, reporting only
  tollgate run --context staging --default-mode Audit --metrics-secure=false --metrics-bind-address :8080`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// A wrong flag is reported before a missing kubeconfig; Run checks them again.
			if _, err := flags.Options(); err != nil {
				return err
			}
			cfg, err := cluster.RESTConfig()
			if err != nil {
				return err
			}
			return flags.Run(ctrl.SetupSignalHandler(), cfg)
		},
	}
	flags.AddFlags(cmd.Flags())
	cluster.AddManagerFlags(cmd)
	return cmd
}
