package kubeconn

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/internal/version"
)

// Flags are kubectl's cluster flags, from cli-runtime: --kubeconfig (else $KUBECONFIG,
// else ~/.kube/config, else the in-cluster config), --context, --cluster, --user, --server,
// --token, --as, --as-group, --as-uid, the TLS flags, --request-timeout and -n/--namespace
// (the context's namespace when not given).
type Flags struct {
	config *genericclioptions.ConfigFlags
	all    *bool // -A, when the command has it
}

// DefaultRequestTimeout bounds each request to the API server when --request-timeout is not
// given: kubectl waits forever by default, and a server that accepts the connection but never
// answers would hang the command. kubectl's own discovery gives up after about as long. An
// explicit --request-timeout=0 still means kubectl's "no limit".
const DefaultRequestTimeout = 30 * time.Second

// AddFlags adds kubectl's cluster flags, -n and --request-timeout (default
// DefaultRequestTimeout) among them.
func (f *Flags) AddFlags(cmd *cobra.Command) {
	f.config = genericclioptions.NewConfigFlags(false)
	f.config.CacheDir = nil // Tollgate's client keeps no discovery cache: the flag would do nothing
	timeout := DefaultRequestTimeout.String()
	f.config.Timeout = &timeout
	addClusterFlags(cmd, f.config)
	cmd.Flags().Lookup("request-timeout").Usage = "how long to wait for each answer of the API server before giving up, with a unit (1s, 2m); 0 waits forever"
	cmd.Flags().Lookup("namespace").Usage = "namespace (default: the kubeconfig context's namespace, else \"default\")"
	_ = cmd.RegisterFlagCompletionFunc("namespace", f.CompleteNamespaces)
}

// AddManagerFlags adds the flags for `tollgate run`: no -n (the manager watches every
// namespace; --policy-namespace names its own) and no --request-timeout (it would cut the
// manager's watches).
func (f *Flags) AddManagerFlags(cmd *cobra.Command) {
	f.config = genericclioptions.NewConfigFlags(false)
	f.config.CacheDir, f.config.Namespace, f.config.Timeout = nil, nil, nil
	addClusterFlags(cmd, f.config)
}

// ClusterFlagAnnotation marks kubectl's cluster flags, which help lists apart from the
// command's own (-n stays with the command's: each command gives it its own meaning).
const ClusterFlagAnnotation = "tollgate.dev/cluster-flag"

func addClusterFlags(cmd *cobra.Command, config *genericclioptions.ConfigFlags) {
	fs := pflag.NewFlagSet("cluster", pflag.ContinueOnError)
	config.AddFlags(fs)
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "namespace" {
			_ = fs.SetAnnotation(fl.Name, ClusterFlagAnnotation, []string{"true"})
		}
		cmd.Flags().AddFlag(fl)
	})
}

// AddAllNamespaces adds -A/--all-namespaces, bound to all, with usage.
func (f *Flags) AddAllNamespaces(cmd *cobra.Command, all *bool, usage string) {
	f.all = all
	cmd.Flags().BoolVarP(all, "all-namespaces", "A", false, usage)
}

// CheckScope refuses -n together with -A, as kubectl does.
func (f *Flags) CheckScope() error {
	if f.all != nil && *f.all && f.Namespace() != "" {
		return errors.New("give either -n NAMESPACE or -A, not both")
	}
	return nil
}

// Namespace is -n as given, "" when it was not.
func (f *Flags) Namespace() string {
	if f.config == nil || f.config.Namespace == nil {
		return ""
	}
	return *f.config.Namespace
}

// RESTConfig finds the cluster as kubectl does.
func (f *Flags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("find the cluster: %w (point --kubeconfig or $KUBECONFIG at a kubeconfig, pick one of its contexts with --context, or give --server and --token)", err)
	}
	cfg.UserAgent = "tollgate/" + version.Get().Version
	if cfg.Timeout > 0 {
		srv := server{host: cfg.Host, timeout: cfg.Timeout}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return timeoutHint{rt, srv} })
	}
	return cfg, nil
}

// timeoutHint says, when a request to the API server runs out of --request-timeout, which
// server did not answer and how to wait longer: every request goes through it, the discovery
// of the server's APIs too.
type timeoutHint struct {
	next   http.RoundTripper
	server server
}

// RoundTrip tells a timeout by the request's deadline, or by the time it took
// (timedOutRequest).
func (t timeoutHint) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil && timedOutRequest(req.Context(), start, t.server.timeout) {
		return resp, t.server.timedOut(err)
	}
	return resp, err
}

// WrappedRoundTripper lets client-go cancel a request through the wrapper.
func (t timeoutHint) WrappedRoundTripper() http.RoundTripper { return t.next }

// Connect returns a client that reads the live API server (no cache), whose errors say what
// they mean to a person (a timeout, a server that is no Kubernetes API server), the namespace
// to use (-n, else the context's, else "default") and the server's address for messages.
func (f *Flags) Connect() (client.Client, string, *rest.Config, error) {
	if err := f.CheckScope(); err != nil {
		return nil, "", nil, err
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, "", nil, err
	}
	ns, _, err := f.config.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return nil, "", nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	return explaining{Client: c, server: server{host: cfg.Host, timeout: cfg.Timeout}}, ns, cfg, nil
}
