package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

type policyExportFlags struct {
	force     bool
	withTests bool
}

func newPolicyExportCommand() *cobra.Command {
	var f policyExportFlags
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write the embedded policies to a folder, as an OPA bundle",
		Long: `Write the Rego policies embedded in this binary to DIR, at the paths the manager knows them
by (upgrade/upgrade.rego, main/main.rego, ...), with a .manifest (roots ["tollgate"], revision
the policy revision of the embedded set) so DIR is an OPA bundle folder. The embedded tests
(*_test.rego) are left out unless --with-tests.

Use it to read the rules the manager runs, to start a replacement of an embedded file (copy it
to your --policy-dir folder, keeping its path), or to test your own policies with the real opa:
'opa test DIR site/'. DIR is created; a folder that already holds files is refused unless
--force (which overwrites the files it writes and leaves others alone).`,
		Example: `  tollgate policy export ./tollgate-policies
  go tool opa test ./tollgate-policies site/

  # with the embedded tests and their input builders (data.tollgate.fixtures_test)
  tollgate policy export --with-tests --force ./tollgate-policies`,
		Args: wantArgs(false, "the folder to write to", "policy export ./tollgate-policies"),
		RunE: runs(f.run),
	}
	cmd.Flags().BoolVar(&f.force, "force", false, "write into a folder that already holds files, overwriting those of the same name")
	cmd.Flags().BoolVar(&f.withTests, "with-tests", false, "include the embedded *_test.rego files (tests, input builders and a fixture pack)")
	return cmd
}

func (f *policyExportFlags) run(ctx context.Context, stdout, _ io.Writer, args []string) error {
	dir := args[0]
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !f.force {
		return fmt.Errorf("%s already holds files: give an empty or new folder, or --force to overwrite", dir)
	}
	n, revision, err := policysource.ExportEmbedded(ctx, dir, f.withTests)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %d policy files and .manifest (revision %s) to %s\n", n, revision, dir)
	return err
}
