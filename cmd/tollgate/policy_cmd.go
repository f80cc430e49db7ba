package main

import (
	"github.com/spf13/cobra"
)

// newPolicyCommand groups the commands that work on policies rather than on one decision:
// diff (what a change would do), export (the embedded policies as an OPA bundle folder) and
// test (Rego unit tests with the manager's built-ins).
func newPolicyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work on Tollgate's policies: diff a change, export the embedded ones, run Rego tests",
		Long: `Commands for policy authors:

  diff    what a candidate policy change would newly block or allow, on the live cluster or a snapshot
  export  write the embedded policies as an OPA bundle folder, to read or to test with opa
  test    run Rego unit tests against the embedded policies, with the manager's built-ins`,
		Example: `  tollgate policy diff --policy-dir policy/
  tollgate policy export ./tollgate-policies
  tollgate policy test site/ --coverage`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPolicyDiffCommand(), newPolicyExportCommand(), newPolicyTestCommand())
	return cmd
}
