package main

import (
	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/policyset"
)

// policyFlags choose the policy set of eval and explain: the embedded policies, plus OPA
// bundles, plus the policy ConfigMaps, plus the .rego files of a folder (which replace
// embedded files of the same path).
type policyFlags struct {
	dir       string
	bundles   []string
	namespace string
}

// sources are the flags' policy sources.
func (f *policyFlags) sources() policyset.Sources {
	return policyset.Sources{Dir: f.dir, Bundles: f.bundles, Namespace: f.namespace}
}

func (f *policyFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "policy-dir", "", "folder of extra .rego modules; a file with the path of an embedded one (e.g. upgrade/upgrade.rego) replaces it; *_test.rego files are skipped")
	cmd.Flags().StringSliceVar(&f.bundles, "bundle", nil, "OPA bundle to load as the manager does: a directory, a .tar.gz file, or an http(s) bundle server URL (repeatable)")
	cmd.Flags().StringVar(&f.namespace, "policy-namespace", policysource.DefaultNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) to use, as the manager does")
}
