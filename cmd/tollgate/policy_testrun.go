package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/report/regotest"
)

// exitTestsFailed is the exit code of `policy test` when a test fails, as `opa test`'s.
const exitTestsFailed = 2

func newPolicyTestCommand() *cobra.Command {
	var o regotest.Options
	cmd := &cobra.Command{
		Use:   "test DIR...",
		Short: "Run Rego tests against the embedded policies, with the manager's built-ins",
		Long: `Run the Rego tests (rules named test_* in the .rego files of each DIR, usually *_test.rego) with
OPA's test runner, on the policy set the manager would run: the embedded policies, then --bundle
(policy packs such as bundles/packs/window, which are not embedded), then every .rego file of the
DIRs (a file whose path under its DIR is that of an embedded one, e.g. upgrade/upgrade.rego,
replaces it, as with --policy-dir).

The non-test modules must first compile as the manager compiles them (strict mode, the policy
contract); tests run with the manager's capabilities, so a policy that calls a built-in the
manager refuses (http.send, time.now_ns, rand.intn...) fails here as it would in the cluster.
Output is opa test's; --coverage adds the coverage of each policy file.

Exit status: 0 when every test passes; 2 when a test fails or errors; 1 when the policies do not
compile or no test is found.`,
		Example: `  # your site's rules and tests, against the embedded policies
  tollgate policy test site/

  # a policy pack and its tests, with coverage
  tollgate policy test bundles/packs/window --coverage

  # only some tests, verbosely
  tollgate policy test site/ --run 'freeze' -v`,
		Args: wantArgs(true, "at least one folder of .rego tests", "policy test site/"),
		RunE: runs(func(ctx context.Context, stdout, _ io.Writer, dirs []string) error {
			return runPolicyTest(ctx, stdout, o, dirs)
		}),
	}
	cmd.Flags().StringSliceVar(&o.Bundles, "bundle", nil, "OPA bundle loaded with the embedded policies: a directory, a .tar.gz file, or a URL (repeatable)")
	cmd.Flags().BoolVar(&o.Coverage, "coverage", false, "print the coverage of each policy file (percent of lines) after the results")
	cmd.Flags().StringVarP(&o.Filter, "run", "r", "", "run only the tests whose package.rule name matches this regular expression")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "list every test, and print() output of the failing ones")
	cmd.Flags().BoolVar(&o.EmbeddedTests, "embedded-tests", false, "also load (and run) the embedded tests, whose input builders (data.tollgate.fixtures_test) your tests may import")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", regotest.DefaultTimeout, "time limit of each test")
	return cmd
}

// runPolicyTest runs the tests; a failing one is exit status 2, as with opa test.
func runPolicyTest(ctx context.Context, stdout io.Writer, o regotest.Options, dirs []string) error {
	sum, err := regotest.Run(ctx, stdout, dirs, o)
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return &exitError{code: exitTestsFailed, err: fmt.Errorf("%d of %d test(s) failed", sum.Failed, sum.Passed+sum.Failed)}
	}
	return nil
}
