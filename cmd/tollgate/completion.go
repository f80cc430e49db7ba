package main

import (
	"github.com/spf13/cobra"
)

// Shell completion. cobra's `completion` command writes the bash, zsh, fish and PowerShell
// scripts; they call `tollgate __complete`, which ends here for the values read from the
// cluster: namespaces for -n, Subscription names for the commands that take one. kubectl
// (1.26 and later) completes a plugin by running kubectl_complete-tollgate from the PATH,
// which passes its arguments on to `kubectl-tollgate __complete`.

func newCompletionCommand() *cobra.Command {
	var noDescriptions bool
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Write the shell completion script for tollgate",
		Long: `Write the script that completes tollgate's commands, flags and values in bash, zsh, fish or
PowerShell, among them namespaces (-n) and Subscription names (explain), read from the cluster
with the command line's cluster flags.

As a kubectl plugin, kubectl (1.26 and later) completes it by running kubectl_complete-tollgate
from the PATH; that script hands its arguments to "kubectl-tollgate __complete".`,
		Example: `  # bash, in this shell
  source <(tollgate completion bash)

  # zsh, for every shell to come
  tollgate completion zsh > "${fpath[1]}/_tollgate"

  # as a kubectl plugin, beside kubectl-tollgate on the PATH
  printf '#!/bin/sh\nexec kubectl-tollgate __complete "$@"\n' > ~/bin/kubectl_complete-tollgate
  chmod +x ~/bin/kubectl_complete-tollgate`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      wantArgs(false, "one shell: bash, zsh, fish or powershell", "completion bash", "bash", "zsh", "fish", "powershell"),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, !noDescriptions)
			case "zsh":
				if noDescriptions {
					return root.GenZshCompletionNoDesc(w)
				}
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, !noDescriptions)
			default:
				if noDescriptions {
					return root.GenPowerShellCompletion(w)
				}
				return root.GenPowerShellCompletionWithDesc(w)
			}
		},
	}
	cmd.Flags().BoolVar(&noDescriptions, "no-descriptions", false, "complete without the descriptions of the choices")
	return cmd
}
