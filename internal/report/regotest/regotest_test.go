package regotest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/report/regotest"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// freeze is a site policy that holds team-f, with METADATA as the contract asks.
const freeze = `# METADATA
# description: A site's change freeze, for one namespace.
package tollgate.packs.sitefreeze

import data.tollgate.lib

# METADATA
# title: The namespace is frozen
# custom:
#   code: ChangeFreeze
deny contains {"code": rego.metadata.rule().custom.code, "message": msg} if {
	lib.subscription_namespace == "team-f"
	msg := sprintf("%s is frozen until 2026-12-01", [lib.subscription_namespace])
}
`

// freezeTests has one test that passes and one that fails (the freeze holds team-f only).
const freezeTests = `package tollgate.packs.sitefreeze_test

import data.tollgate.packs.sitefreeze

_sub(ns) := {"subscription": {"metadata": {"namespace": ns, "name": "etcd"}}}

test_team_f_is_frozen if {
	some d in sitefreeze.deny with input as _sub("team-f")
	d.code == "ChangeFreeze"
}

test_team_b_is_frozen_too if {
	some d in sitefreeze.deny with input as _sub("team-b")
	d.code == "ChangeFreeze"
}
`

// dir writes files (path: source) into a new folder, and returns it.
func dir(t *testing.T, files map[string]string) string {
	t.Helper()
	d := t.TempDir()
	for p, src := range files {
		full := filepath.Join(d, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(src), 0o600))
	}
	return d
}

func TestRunCountsAndReportsAsOPATest(t *testing.T) {
	site := dir(t, map[string]string{"freeze.rego": freeze, "freeze_test.rego": freezeTests})
	for _, tt := range []struct {
		name     string
		opts     regotest.Options
		want     regotest.Summary
		contains []string
	}{
		{
			name: "a failing test is counted and reported, and is no error",
			want: regotest.Summary{Passed: 1, Failed: 1},
			contains: []string{
				"data.tollgate.packs.sitefreeze_test.test_team_b_is_frozen_too: FAIL",
				"FAILURES", "PASS: 1/2", "FAIL: 1/2",
			},
		},
		{
			name: "a filter runs only the tests it matches", opts: regotest.Options{Filter: "team_f"},
			want: regotest.Summary{Passed: 1}, contains: []string{"PASS: 1/1"},
		},
		{
			name: "verbose lists every test", opts: regotest.Options{Filter: "team_f", Verbose: true},
			want: regotest.Summary{Passed: 1}, contains: []string{"data.tollgate.packs.sitefreeze_test.test_team_f_is_frozen: PASS"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			sum, err := regotest.Run(context.Background(), &out, []string{site}, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, sum)
			for _, s := range tt.contains {
				assert.Contains(t, out.String(), s)
			}
			assert.NotContains(t, out.String(), "COVERAGE", "coverage only when asked")
		})
	}
}

func TestRunRefusesWhatTheManagerRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		err   string
	}{
		{
			name: "a policy that calls a built-in the manager refuses is named by its file",
			files: map[string]string{
				"clock.rego":      "# METADATA\n# description: Reads the wall clock.\npackage tollgate.packs.clock\n\n# METADATA\n# title: Too late\n# custom:\n#   code: TooLate\ndeny contains {\"code\": \"TooLate\", \"message\": \"too late\"} if {\n\ttime.now_ns() > 0\n}\n",
				"clock_test.rego": "package tollgate.packs.clock_test\n\ntest_nothing if true\n",
			},
			err: "the policies do not compile as the manager compiles them:\n  {dir}/clock.rego:10:2: time.now_ns is not allowed in Tollgate policies",
		},
		{
			name:  "a test that calls a built-in the manager refuses does not compile",
			files: map[string]string{"clock_test.rego": "package tollgate.packs.clock_test\n\ntest_late if time.now_ns() > 0\n"},
			err:   "the tests do not compile with the manager's capabilities:\n",
		},
		{
			name:  "a test that does not parse",
			files: map[string]string{"broken_test.rego": "package tollgate.packs.broken_test\n\ntest_broken if {\n"},
			err:   "the tests do not parse:\n",
		},
		{
			name:  "no test rule: nothing ran, which is an error",
			files: map[string]string{"freeze.rego": freeze},
			err:   "no test ran: name test rules test_* (in {dir})",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := dir(t, tt.files)
			_, err := regotest.Run(context.Background(), &bytes.Buffer{}, []string{d}, regotest.Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), strings.ReplaceAll(tt.err, "{dir}", filepath.ToSlash(d)))
		})
	}
	_, err := regotest.Run(context.Background(), &bytes.Buffer{}, []string{filepath.Join(t.TempDir(), "absent")}, regotest.Options{})
	assert.ErrorContains(t, err, "policy folder: ", "a folder that does not exist")
}

func TestRunMeasuresCoverageOfPolicyFiles(t *testing.T) {
	site := dir(t, map[string]string{"freeze.rego": freeze, "freeze_test.rego": freezeTests})
	var out bytes.Buffer
	sum, err := regotest.Run(context.Background(), &out, []string{site}, regotest.Options{Coverage: true, Filter: "team_f"})
	require.NoError(t, err)
	assert.Equal(t, regotest.Summary{Passed: 1}, sum)
	lines := strings.Split(out.String(), "\n")
	assert.Contains(t, lines, "COVERAGE")
	assert.Contains(t, lines, "   100.0%  "+filepath.ToSlash(filepath.Join(site, "freeze.rego")))
	assert.Contains(t, out.String(), "%  upgrade/upgrade.rego\n", "the embedded policies are measured too")
	assert.Regexp(t, `\n +[0-9.]+%  total\n$`, out.String(), "the total comes last")
	assert.NotContains(t, out.String(), "freeze_test.rego", "tests are not measured")
}

// TestRunWithTheEmbeddedTestsAndAPack: the embedded tests pass with the manager's
// capabilities, beside a policy pack and its tests.
func TestRunWithTheEmbeddedTestsAndAPack(t *testing.T) {
	var out bytes.Buffer
	sum, err := regotest.Run(context.Background(), &out, nil, regotest.Options{
		EmbeddedTests: true, Bundles: []string{repo.Path("bundles", "packs", "freeze")},
	})
	require.NoError(t, err, out.String())
	assert.Zero(t, sum.Failed)
	assert.Greater(t, sum.Passed, 10)
	assert.Contains(t, out.String(), "PASS: ")
	assert.NotContains(t, out.String(), "FAIL")
}
