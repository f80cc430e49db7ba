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
	assert.Equal(t, namesAndTypes(policies.InputV1), readmeTable(t, "## Input document, version 1"))
}

// tollgate.main requires exactly the keys InputV1 marks Required (its _input_keys).
func TestInputV1RequiredAreMainsInputKeys(t *testing.T) {
	assert.ElementsMatch(t, required(policies.InputV1), mainsKeySet(t, "_input_keys"))
}

// README.md's table of extension document version 1 gives the keys of ExtensionV1, in its
// order, with their types.
func TestExtensionV1IsTheReadmeTable(t *testing.T) {
	assert.Equal(t, namesAndTypes(policies.ExtensionV1), readmeTable(t, "## Extension document, version 1"))
}

// tollgate.main requires exactly the keys ExtensionV1 marks Required (its _extension_keys).
func TestExtensionV1RequiredAreMainsExtensionKeys(t *testing.T) {
	assert.ElementsMatch(t, required(policies.ExtensionV1), mainsKeySet(t, "_extension_keys"))
}

// readmeTable is the table of keys that follows heading in README.md, as keys with their types.
func readmeTable(t *testing.T, heading string) []policies.InputKey {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), heading+"\n")
	require.True(t, ok, "README.md has no %q", heading)
	table, _, _ = strings.Cut(table, "\n#")
	// the first table of the section: its rows, up to the first line that is not one
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "|") {
			rows = append(rows, line)
		} else if len(rows) > 0 {
			break
		}
	}
	table = strings.Join(rows, "\n")
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
	return documented
}

// namesAndTypes are keys without their Required flags, as a README table gives them.
func namesAndTypes(keys []policies.InputKey) []policies.InputKey {
	var out []policies.InputKey
	for _, k := range keys {
		out = append(out, policies.InputKey{Name: k.Name, Type: k.Type})
	}
	return out
}

func required(keys []policies.InputKey) []string {
	var out []string
	for _, k := range keys {
		if k.Required {
			out = append(out, k.Name)
		}
	}
	return out
}

// mainsKeySet are the strings of the set rule name in tollgate.main.
func mainsKeySet(t *testing.T, name string) []string {
	t.Helper()
	src, err := policies.FS.ReadFile("main/main.rego")
	require.NoError(t, err)
	mod, err := ast.ParseModuleWithOpts("main/main.rego", string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	require.NoError(t, err)
	var inMain []string
	found := false
	for _, r := range mod.Rules {
		if r.Head.Name.String() != name {
			continue
		}
		found = true
		set, ok := r.Head.Value.Value.(ast.Set)
		require.True(t, ok, "%s is a set of strings", name)
		for _, term := range set.Slice() {
			inMain = append(inMain, string(term.Value.(ast.String)))
		}
	}
	require.True(t, found, "tollgate.main has no %s", name)
	return inMain
}
