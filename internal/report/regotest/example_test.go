package regotest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/internal/report/regotest"
)

// A site's test of the embedded policies, run with the manager's capabilities: the installed
// operator's Upgradeable=False holds the upgrade. The test builds its input with the embedded
// input builders (data.tollgate.fixtures_test), so the embedded tests are loaded too; the
// filter runs the site's test only.
func ExampleRun() {
	site, err := os.MkdirTemp("", "site")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(site) }()
	test := `package tollgate.site_test

import data.tollgate.fixtures_test as f
import data.tollgate.upgrade

test_an_operator_that_says_not_now_holds_its_upgrade if {
	doc := f.with_patch({"operatorCondition": f.operator_condition(1, [], [f.upgradeable("False", "migrating", 1)])})
	some d in upgrade.deny with input as doc
	d.code == "OperatorNotUpgradeable"
}
`
	if err := os.WriteFile(filepath.Join(site, "site_test.rego"), []byte(test), 0o600); err != nil {
		panic(err)
	}
	sum, err := regotest.Run(context.Background(), os.Stdout, []string{site}, regotest.Options{EmbeddedTests: true, Filter: "site_test"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d passed, %d failed\n", sum.Passed, sum.Failed)
	// Output:
	// PASS: 1/1
	// 1 passed, 0 failed
}
