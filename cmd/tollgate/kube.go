package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis"
)

// clusterFlags find the cluster as kubectl does: --kubeconfig, else $KUBECONFIG, else
// ~/.kube/config, else the in-cluster config; --context picks a context; -n defaults to the
// context's namespace.
type clusterFlags struct {
	kubeconfig string
	context    string
	namespace  string
}

func (f *clusterFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "path of the kubeconfig file (default: $KUBECONFIG or ~/.kube/config, as kubectl)")
	cmd.Flags().StringVar(&f.context, "context", "", "kubeconfig context to use (default: the current context)")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "namespace (default: the context's namespace, else \"default\")")
}

func (f *clusterFlags) loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
}

// connect returns a client that reads the live API server (no cache), the namespace to use
// and the server's address for messages.
func (f *clusterFlags) connect() (client.Client, string, *rest.Config, error) {
	loader := f.loader()
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", nil, fmt.Errorf("find the cluster: %w (point --kubeconfig or $KUBECONFIG at a kubeconfig, or run inside a cluster)", err)
	}
	ns := f.namespace
	if ns == "" {
		if ns, _, err = loader.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return nil, "", nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	return c, ns, cfg, nil
}
