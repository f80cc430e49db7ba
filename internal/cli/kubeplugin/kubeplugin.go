// Package kubeplugin presents a cobra command tree the way kubectl presents its plugins: the
// program named as the person runs it ("kubectl tollgate" when installed as kubectl-tollgate),
// in usage lines, examples and help texts alike, and kubectl's cluster flags listed apart
// from each command's own.
package kubeplugin

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/internal/cli/kubeconn"
)

// Name is how a person runs the program called name whose argv[0] is arg0: "kubectl name"
// when it is installed as a kubectl plugin (kubectl-name, or kubectl_complete-name's call of
// it), else name.
func Name(arg0, name string) string {
	if strings.HasPrefix(filepath.Base(arg0), "kubectl-") {
		return "kubectl " + name
	}
	return name
}

// Rename writes the usage lines, examples and help texts of root and its subcommands with
// self, the way the person runs the program: commands write "tollgate ...", and as a kubectl
// plugin they read "kubectl tollgate ...". Use stays one word, since cobra takes a command's
// name from the first word of Use; the usage lines take the display name instead.
func Rename(root *cobra.Command, self string) {
	if self == root.Name() {
		return
	}
	mention := regexp.MustCompile(`(^|[\s'"(])` + regexp.QuoteMeta(root.Name()) + ` `)
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: self}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = mention.ReplaceAllString(c.Example, "${1}"+self+" ")
		c.Long = mention.ReplaceAllString(c.Long, "${1}"+self+" ")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// GroupClusterFlags makes the help of root and its subcommands list kubectl's cluster flags
// (those kubeconn marks) under "Cluster Flags (kubectl's):", after the command's own.
func GroupClusterFlags(root *cobra.Command) {
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}",
		`{{flagUsages .LocalFlags false | trimTrailingWhitespaces}}{{if flagUsages .LocalFlags true}}

Cluster Flags (kubectl's):
{{flagUsages .LocalFlags true | trimTrailingWhitespaces}}{{end}}`, 1))
}

func init() {
	cobra.AddTemplateFunc("flagUsages", flagUsages)
}

// flagUsages is the help of the flags of fs that are kubectl's cluster flags (cluster), or of
// the others.
func flagUsages(fs *pflag.FlagSet, cluster bool) string {
	some := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[kubeconn.ClusterFlagAnnotation]; ok == cluster {
			some.AddFlag(f)
		}
	})
	return some.FlagUsages()
}
