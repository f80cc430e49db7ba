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
		Short: "Run the manager: gate every Subscription and approve what policy allows",
		Example: `  # in a cluster (the Deployment in config/manager does this)
  tollgate run --leader-elect --policy-namespace tollgate-system

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
