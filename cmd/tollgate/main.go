// Command tollgate gates OLM operator upgrades by policy. `tollgate run` is the manager;
// eval, explain and snapshot answer "why was this upgrade held?" and test policies
// without a cluster. Installed as kubectl-tollgate, it is a kubectl plugin.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeplugin"
	"github.com/tollgate-dev/tollgate/internal/version"
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
	root.AddCommand(
		newRunCommand(),
		newEvalCommand(), newExplainCommand(), newStatusCommand(), newSnapshotCommand(), newPolicyCommand(),
		newVersionCommand(), newCompletionCommand(),
	)
	kubeplugin.Rename(root, selfName())
	kubeplugin.GroupClusterFlags(root)
	return root
}

// selfName is how a person runs this program: "kubectl tollgate" as a kubectl plugin.
func selfName() string { return kubeplugin.Name(os.Args[0], "tollgate") }

// runs adapts what a command does once its flags are parsed to cobra: run gets the command's
// context, standard output and error, and arguments.
func runs(run func(ctx context.Context, stdout, stderr io.Writer, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
	}
}

// wantArgs accepts one argument (many: one or more), one of choices when there are any, and
// otherwise says what to give, with an example command line as the person runs the program.
func wantArgs(many bool, what, example string, choices ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		ok := len(args) == 1 || many && len(args) > 1
		if ok && len(choices) > 0 {
			ok = slices.Contains(choices, args[0])
		}
		if !ok {
			return fmt.Errorf("give %s, e.g. %s %s", what, selfName(), example)
		}
		return nil
	}
}

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
