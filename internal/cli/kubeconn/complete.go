package kubeconn

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// completionTimeout bounds what a shell completion may wait for the API server.
const completionTimeout = 5 * time.Second

// CompleteNamespaces lists the cluster's namespaces, found with the command's cluster flags.
func (f *Flags) CompleteNamespaces(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
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

// CompleteSubscriptions lists the Subscriptions of -n (of every namespace with -A), for a
// command whose one argument names a Subscription.
func (f *Flags) CompleteSubscriptions(all *bool) cobra.CompletionFunc {
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
func (f *Flags) completeList(cmd *cobra.Command, list client.ObjectList, all bool, names func() []string) []string {
	c, ns, _, err := f.Connect()
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
