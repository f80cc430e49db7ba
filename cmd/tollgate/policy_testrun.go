package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policysource"
)

// exitTestsFailed is the exit code of `policy test` when a test fails, as `opa test`'s.
const exitTestsFailed = 2

type policyTestFlags struct {
	bundles       []string
	coverage      bool
	run           string
	verbose       bool
	embeddedTests bool
	timeout       time.Duration
}

func newPolicyTestCommand() *cobra.Command {
	var f policyTestFlags
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
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("give at least one folder of .rego tests, e.g. %s policy test site/", selfName())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPolicyTest(cmd.Context(), cmd.OutOrStdout(), f, args)
		},
	}
	cmd.Flags().StringSliceVar(&f.bundles, "bundle", nil, "OPA bundle loaded with the embedded policies: a directory, a .tar.gz file, or a URL (repeatable)")
	cmd.Flags().BoolVar(&f.coverage, "coverage", false, "print the coverage of each policy file (percent of lines) after the results")
	cmd.Flags().StringVarP(&f.run, "run", "r", "", "run only the tests whose package.rule name matches this regular expression")
	cmd.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "list every test, and print() output of the failing ones")
	cmd.Flags().BoolVar(&f.embeddedTests, "embedded-tests", false, "also load (and run) the embedded tests, whose input builders (data.tollgate.fixtures_test) your tests may import")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Second, "time limit of each test")
	return cmd
}

// testModule is one module of the test run: its key (the path reported), and the path the
// manager's engine would know it by.
type testModule struct {
	key, enginePath, source string
	test                    bool
}

func runPolicyTest(ctx context.Context, stdout io.Writer, f policyTestFlags, dirs []string) error {
	mods, err := f.modules(ctx, dirs)
	if err != nil {
		return err
	}
	if err := checkAsManager(ctx, mods); err != nil {
		return err
	}
	parsed := map[string]*ast.Module{}
	for _, m := range mods {
		pm, err := ast.ParseModuleWithOpts(m.key, m.source, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return fmt.Errorf("the tests do not parse:\n%w", err)
		}
		parsed[m.key] = pm
	}
	compiler := ast.NewCompiler().WithCapabilities(engine.Capabilities()).WithEnablePrintStatements(true).WithDefaultRegoVersion(ast.RegoV1)
	runner := tester.NewRunner().SetCompiler(compiler).SetModules(parsed).
		SetStore(inmem.NewWithOpts(inmem.OptRoundTripOnWrite(false))).SetDefaultRegoVersion(ast.RegoV1).
		CapturePrintOutput(true).SetTimeout(f.timeout).Filter(f.run)
	cov := cover.New()
	if f.coverage {
		runner.SetCoverageQueryTracer(cov)
	}
	ch, err := runner.RunTests(ctx, nil)
	if err != nil {
		return fmt.Errorf("the tests do not compile with the manager's capabilities:\n%w", err)
	}
	passed, failed := 0, 0
	relay := make(chan *tester.Result)
	go func() {
		defer close(relay)
		for r := range ch {
			if r.Skip {
				continue
			}
			if r.Pass() {
				passed++
			} else {
				failed++
			}
			relay <- r
		}
	}()
	if err := (tester.PrettyReporter{Output: stdout, Verbose: f.verbose, FailureLine: true}).Report(relay); err != nil {
		return err
	}
	if f.coverage {
		printCoverage(stdout, cov.Report(parsed), mods)
	}
	switch {
	case failed > 0:
		return &exitError{code: exitTestsFailed, err: fmt.Errorf("%d of %d test(s) failed", failed, passed+failed)}
	case passed == 0:
		return fmt.Errorf("no test ran: name test rules test_* (in %s)", strings.Join(dirs, ", "))
	}
	return nil
}

// modules are the embedded policies (with their tests when asked), the bundles' modules and
// the DIRs' .rego files, a DIR file with an embedded path replacing the embedded one.
func (f *policyTestFlags) modules(ctx context.Context, dirs []string) ([]testModule, error) {
	byKey := map[string]testModule{}
	embedded := map[string]bool{}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		test := strings.HasSuffix(p, "_test.rego")
		if test && !f.embeddedTests {
			return nil
		}
		b, err := fs.ReadFile(policies.FS, p)
		embedded[p] = true
		byKey[p] = testModule{key: p, enginePath: p, source: string(b), test: test}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(f.bundles) > 0 {
		src, err := policysource.LoadBundles(ctx, f.bundles, policysource.BundleOptions{Once: true})
		if err != nil {
			return nil, err
		}
		for _, b := range src.Bundles() {
			for _, m := range b.Modules {
				p := strings.TrimPrefix(orDefault(m.RelativePath, m.Path), "/")
				byKey[p] = testModule{key: p, enginePath: p, source: string(m.Raw), test: strings.HasSuffix(p, "_test.rego")}
			}
		}
	}
	for i, dir := range dirs {
		if err := addDirModules(byKey, embedded, dir, i); err != nil {
			return nil, err
		}
	}
	return slices.SortedFunc(maps.Values(byKey), func(a, b testModule) int { return strings.Compare(a.key, b.key) }), nil
}

func addDirModules(byKey map[string]testModule, embedded map[string]bool, dir string, i int) error {
	files, err := policysource.ReadDir(dir, true)
	if err != nil {
		return err
	}
	for _, f := range files {
		key := path.Join(filepath.ToSlash(dir), f.Path)
		m := testModule{key: key, enginePath: path.Join(fmt.Sprintf("dir%d", i), f.Path), source: f.Source, test: strings.HasSuffix(f.Path, "_test.rego")}
		if embedded[f.Path] {
			delete(byKey, f.Path)
			m.enginePath = f.Path
		}
		byKey[m.key] = m
	}
	return nil
}

// checkAsManager compiles the non-test modules as the manager would (strict, the contract,
// its capabilities), and names each problem by the file the author knows.
func checkAsManager(ctx context.Context, mods []testModule) error {
	var opts engine.Options // the embedded policies, which the modules replace or add to
	byPath := map[string]string{}
	for _, m := range mods {
		if !m.test {
			opts.Modules = append(opts.Modules, engine.Module{Path: m.enginePath, Source: m.source})
			byPath[m.enginePath] = m.key
		}
	}
	_, err := engine.New(ctx, opts)
	var ce *engine.CompileError
	if !errors.As(err, &ce) {
		return err
	}
	lines := make([]string, 0, len(ce.Items))
	for _, it := range ce.Items {
		if key, ok := byPath[it.File]; ok {
			it.File = key
		}
		lines = append(lines, "  "+it.String())
	}
	return fmt.Errorf("the policies do not compile as the manager compiles them:\n%s", strings.Join(lines, "\n"))
}

// printCoverage prints the coverage of every policy (non-test) file, then of them all.
func printCoverage(w io.Writer, rep cover.Report, mods []testModule) {
	fmt.Fprintf(w, "\nCOVERAGE\n")
	covered, notCovered := 0, 0
	for _, m := range mods {
		if m.test {
			continue
		}
		fr := rep.Files[m.key]
		if fr == nil {
			fmt.Fprintf(w, "  %6.1f%%  %s (not evaluated)\n", 0.0, m.key)
			continue
		}
		covered += fr.CoveredLines
		notCovered += fr.NotCoveredLines
		fmt.Fprintf(w, "  %6.1f%%  %s\n", fr.Coverage, m.key)
	}
	total := 0.0
	if covered+notCovered > 0 {
		total = 100 * float64(covered) / float64(covered+notCovered)
	}
	fmt.Fprintf(w, "  %6.1f%%  total\n", total)
}
