package policies_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/policies"
)

// README.md's table of input document version 1 gives the keys of InputV1, in its order, with
// their types.
func TestInputV1IsTheReadmeTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "## Input document, version 1")
	require.True(t, ok)
	table, _, _ = strings.Cut(table, "\n#")
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| ([^|]+?(?:\\\\\\| null)?) \\|")
	var documented []policies.InputKey
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		typ := policies.Object
		switch {
		case m[2] == "string":
			typ = policies.String
		case strings.HasSuffix(m[2], "[]"):
			typ = policies.List
		}
		documented = append(documented, policies.InputKey{Name: m[1], Type: typ})
	}
	var want []policies.InputKey
	for _, k := range policies.InputV1 {
		want = append(want, policies.InputKey{Name: k.Name, Type: k.Type})
	}
	assert.Equal(t, want, documented)
}

// tollgate.main requires exactly the keys InputV1 marks Required (its _input_keys).
func TestInputV1RequiredAreMainsInputKeys(t *testing.T) {
	src, err := policies.FS.ReadFile("main/main.rego")
	require.NoError(t, err)
	mod, err := ast.ParseModuleWithOpts("main/main.rego", string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	require.NoError(t, err)
	var inMain []string
	for _, r := range mod.Rules {
		if r.Head.Name.String() != "_input_keys" {
			continue
		}
		set, ok := r.Head.Value.Value.(ast.Set)
		require.True(t, ok, "_input_keys is a set of strings")
		for _, term := range set.Slice() {
			inMain = append(inMain, string(term.Value.(ast.String)))
		}
	}
	var required []string
	for _, k := range policies.InputV1 {
		if k.Required {
			required = append(required, k.Name)
		}
	}
	assert.ElementsMatch(t, required, inMain)
}
