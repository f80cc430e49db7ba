package regotest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/tollgate-dev/tollgate/engine"
)

// DefaultTimeout is the time limit of each test when Options.Timeout is zero, as with opa
// test.
const DefaultTimeout = 5 * time.Second

// Options say which modules a run loads, which tests it runs and what it reports.
type Options struct {
	// Bundles are OPA bundles loaded with the embedded policies: directories, .tar.gz files
	// or URLs, as policysource.LoadBundles reads them.
	Bundles []string
	// EmbeddedTests loads (and runs) the embedded tests too, whose input builders
	// (data.tollgate.fixtures_test) the tests under test may import.
	EmbeddedTests bool
	// Filter, when set, runs only the tests whose package.rule name matches this regular
	// expression.
	Filter string
	// Verbose lists every test, and the print() output of the failing ones.
	Verbose bool
	// Coverage adds the coverage of each policy file (percent of lines) after the results.
	Coverage bool
	// Timeout is the time limit of each test; zero means DefaultTimeout.
	Timeout time.Duration
}

// Summary counts the tests that ran.
type Summary struct {
	Passed, Failed int
}

// Run runs the tests of the .rego files in dirs, with the modules o loads, and writes opa
// test's report to w. A failing test is no error: it is counted in the Summary. Policies or
// tests that do not compile, and a run in which no test ran, are errors.
func Run(ctx context.Context, w io.Writer, dirs []string, o Options) (Summary, error) {
	mods, err := modules(ctx, o, dirs)
	if err != nil {
		return Summary{}, err
	}
	if err := checkAsManager(ctx, mods); err != nil {
		return Summary{}, err
	}
	parsed, err := parse(mods)
	if err != nil {
		return Summary{}, err
	}
	runner, cov := newRunner(parsed, o)
	ch, err := runner.RunTests(ctx, nil)
	if err != nil {
		return Summary{}, fmt.Errorf("the tests do not compile with the manager's capabilities:\n%w", err)
	}
	sum, err := report(w, ch, o.Verbose)
	if err != nil {
		return sum, err
	}
	if o.Coverage {
		writeCoverage(w, cov.Report(parsed), mods)
	}
	if sum.Passed+sum.Failed == 0 {
		return sum, fmt.Errorf("no test ran: name test rules test_* (in %s)", strings.Join(dirs, ", "))
	}
	return sum, nil
}

// parse parses every module, tests included, by the key it is reported under.
func parse(mods []module) (map[string]*ast.Module, error) {
	parsed := map[string]*ast.Module{}
	for _, m := range mods {
		pm, err := ast.ParseModuleWithOpts(m.key, m.source, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return nil, fmt.Errorf("the tests do not parse:\n%w", err)
		}
		parsed[m.key] = pm
	}
	return parsed, nil
}

// newRunner is OPA's test runner with the manager's capabilities, and the coverage tracer it
// reports to when o asks for coverage.
func newRunner(parsed map[string]*ast.Module, o Options) (*tester.Runner, *cover.Cover) {
	timeout := cmp.Or(o.Timeout, DefaultTimeout)
	compiler := ast.NewCompiler().WithCapabilities(engine.Capabilities()).WithEnablePrintStatements(true).WithDefaultRegoVersion(ast.RegoV1)
	runner := tester.NewRunner().SetCompiler(compiler).SetModules(parsed).
		SetStore(inmem.NewWithOpts(inmem.OptRoundTripOnWrite(false))).SetDefaultRegoVersion(ast.RegoV1).
		CapturePrintOutput(true).SetTimeout(timeout).Filter(o.Filter)
	cov := cover.New()
	if o.Coverage {
		runner.SetCoverageQueryTracer(cov)
	}
	return runner, cov
}

// report writes the results as opa test does, and counts them; skipped tests are neither.
func report(w io.Writer, ch <-chan *tester.Result, verbose bool) (Summary, error) {
	var sum Summary
	relay := make(chan *tester.Result)
	go func() {
		defer close(relay)
		for r := range ch {
			if r.Skip {
				continue
			}
			if r.Pass() {
				sum.Passed++
			} else {
				sum.Failed++
			}
			relay <- r
		}
	}()
	err := tester.PrettyReporter{Output: w, Verbose: verbose, FailureLine: true}.Report(relay)
	return sum, err
}

// writeCoverage writes the coverage of every policy (non-test) file, then of them all.
func writeCoverage(w io.Writer, rep cover.Report, mods []module) {
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
