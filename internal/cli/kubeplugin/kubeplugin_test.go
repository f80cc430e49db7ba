package kubeplugin

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
)

func TestNameIsHowThePersonRunsTheProgram(t *testing.T) {
	assert.Equal(t, "kubectl tollgate", Name("/usr/local/bin/kubectl-tollgate", "tollgate"))
	assert.Equal(t, "kubectl tollgate", Name("kubectl-tollgate", "tollgate"))
	assert.Equal(t, "tollgate", Name("/usr/local/bin/tollgate", "tollgate"))
	assert.Equal(t, "tollgate", Name("./tollgate-kubectl-", "tollgate"))
}

func tree() *cobra.Command {
	root := &cobra.Command{Use: "tollgate", Long: "tollgate gates upgrades; see 'tollgate explain'."}
	sub := &cobra.Command{
		Use:     "explain SUBSCRIPTION",
		Long:    "Explain (tollgate explain) a decision; tollgategate stays, as does xtollgate run.",
		Example: "  tollgate explain -n operators etcd\n  # then\n  tollgate status",
		Run:     func(*cobra.Command, []string) {},
	}
	root.AddCommand(sub)
	return root
}

func TestRenameWritesEveryCommandLineAsThePersonRunsIt(t *testing.T) {
	root := tree()
	Rename(root, "kubectl tollgate")
	sub, _, err := root.Find([]string{"explain"})
	require.NoError(t, err)
	assert.Equal(t, "  kubectl tollgate explain -n operators etcd\n  # then\n  kubectl tollgate status", sub.Example)
	assert.Equal(t, "Explain (kubectl tollgate explain) a decision; tollgategate stays, as does xtollgate run.", sub.Long)
	assert.Equal(t, "kubectl tollgate gates upgrades; see 'kubectl tollgate explain'.", root.Long)
	assert.Equal(t, "kubectl tollgate explain SUBSCRIPTION", sub.UseLine())
	assert.Equal(t, "explain", sub.Name(), "the command keeps its one-word name")

	same := tree()
	Rename(same, "tollgate")
	assert.Equal(t, tree().Commands()[0].Example, same.Commands()[0].Example)
	assert.Nil(t, same.Annotations)
}

func TestClusterFlagsAreListedApart(t *testing.T) {
	root := tree()
	sub := root.Commands()[0]
	var cluster kubeconn.Flags
	cluster.AddFlags(sub)
	sub.Flags().Bool("trace", false, "add trace notes")
	GroupClusterFlags(root)
	var help bytes.Buffer
	sub.SetOut(&help)
	require.NoError(t, sub.Usage())
	out := help.String()
	own, kubectls, found := bytes.Cut([]byte(out), []byte("Cluster Flags (kubectl's):"))
	require.True(t, found, out)
	assert.Contains(t, string(own), "--trace")
	assert.Contains(t, string(own), "--namespace", "-n stays with the command's own flags")
	assert.NotContains(t, string(own), "--kubeconfig")
	assert.Contains(t, string(kubectls), "--kubeconfig")
	assert.Contains(t, string(kubectls), "--context")
	assert.NotContains(t, string(kubectls), "--trace")
}
