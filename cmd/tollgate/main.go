// Command tollgate gates OLM operator upgrades by policy. `tollgate run` is the manager;
// eval, explain and snapshot answer "why was this upgrade held?" and test policies
// without a cluster. Installed as kubectl-tollgate, it is a kubectl plugin.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/version"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(exitCode(err))
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "tollgate",
		Short: "Gate OLM operator upgrades by policy, and explain every decision",
		Long: `Tollgate watches OLM Subscriptions and approves their InstallPlans only when its Rego
policies allow the upgrade: the operator says it is upgradeable, its operands are healthy,
its catalog is sound, and the cluster admins' own rules hold.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// As a kubectl plugin, usage lines read "kubectl tollgate explain ..."; Use must stay one
	// word, since cobra takes a command's name from the first word of Use.
	if name := selfName(); name != "tollgate" {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name}
	}
	root.AddCommand(newRunCommand(), newVersionCommand())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	return root
}

// selfName is how a person runs this program: "kubectl tollgate" when it is installed as a
// kubectl plugin, else "tollgate".
func selfName() string {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-tollgate") {
		return "kubectl tollgate"
	}
	return "tollgate"
}

// extraCommands are the other subcommands, each registered by its own file.
var extraCommands []func() *cobra.Command

// exitError carries an exit code other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if e := (*exitError)(nil); errors.As(err, &e) {
		return e.code
	}
	return 1
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the Tollgate version",
		Example: "  tollgate version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "tollgate", version.String())
			return err
		},
	}
}
