package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// Shell completion. cobra's `completion` command writes the bash, zsh, fish and PowerShell
// scripts; they call `tollgate __complete`, which ends here for the values read from the
// cluster: namespaces for -n, Subscription names for the commands that take one. kubectl
// (1.26 and later) completes a plugin by running kubectl_complete-tollgate from the PATH,
// which passes its arguments on to `kubectl-tollgate __complete`.

// completionTimeout bounds what a shell completion may wait for the API server.
const completionTimeout = 5 * time.Second

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
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains([]string{"bash", "zsh", "fish", "powershell"}, args[0]) {
				return fmt.Errorf("give one shell: bash, zsh, fish or powershell, e.g. %s completion bash", selfName())
			}
			return nil
		},
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

// completeNamespaces lists the cluster's namespaces, found with the command's cluster flags.
func (f *clusterFlags) completeNamespaces(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var list corev1.NamespaceList
	names := f.completeList(cmd, &list, true, func() []string {
		out := make([]string, 0, len(list.Items))
		for _, ns := range list.Items {
			out = append(out, ns.Name)
		}
		return out
	})
	return matching(names, prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeSubscriptions lists the Subscriptions of -n (of every namespace with -A), for a
// command whose one argument names a Subscription.
func (f *clusterFlags) completeSubscriptions(all *bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var list v1alpha1.SubscriptionList
		names := f.completeList(cmd, &list, all != nil && *all, func() []string {
			out := make([]string, 0, len(list.Items))
			for _, s := range list.Items {
				out = append(out, s.Name)
			}
			return out
		})
		return matching(names, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeList lists into list (in the namespace of the cluster flags, or in all) and
// returns names(), sorted; nothing when the cluster cannot be read, since a completion has no
// place for an error.
func (f *clusterFlags) completeList(cmd *cobra.Command, list client.ObjectList, all bool, names func() []string) []string {
	c, ns, _, err := f.connect()
	if err != nil {
		return nil
	}
	if all {
		ns = ""
	}
	ctx, cancel := context.WithTimeout(commandContext(cmd), completionTimeout)
	defer cancel()
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil
	}
	out := names()
	slices.Sort(out)
	return slices.Compact(out)
}

func matching(names []string, prefix string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
}

func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
