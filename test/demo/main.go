// Command tollgate-demo tells the story `make demo` tells: Tollgate holds an upgrade on a local
// control plane, explains why, and approves it when the operator is ready. It is not shipped:
// it runs test code (package test/demo) that the tollgate binary does not link.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/test/framework/demo"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var opts demo.Options
	cmd := &cobra.Command{
		Use:   "tollgate-demo",
		Short: "Watch Tollgate hold an upgrade, explain why, and approve it when the operator is ready",
		Long: `Start a local control plane (kube-apiserver and etcd, built by 'make controlplane'), install
the OLM and Tollgate CRDs, run the Tollgate manager in this process, and play a story: an
installed operator reports Upgradeable=False while it migrates storage; a new version arrives
and OLM (played by the demo) creates an InstallPlan waiting for approval; Tollgate holds it and
explains why; the operator reports Upgradeable=True and Tollgate approves the plan.

Takes a few seconds once the binaries exist, leaves nothing running and removes its temporary
files. With --keep the control plane and the manager stay up, and the demo prints a kubeconfig
to explore them with kubectl, until Ctrl-C.`,
		Example: `  # the whole story, then clean up
  make demo
  go run ./test/demo

  # keep the cluster to look around with kubectl; Ctrl-C ends it
  go run ./test/demo --keep`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Out, opts.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return demo.Run(ctx, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "leave the control plane and the manager running and print a kubeconfig, until Ctrl-C")
	cmd.Flags().BoolVar(&opts.Verbose, "verbose", false, "show the manager's log on stderr")
	return cmd
}
