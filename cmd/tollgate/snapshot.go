package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/input"
	"github.com/tollgate-dev/tollgate/policysource"
)

func init() { extraCommands = append(extraCommands, newSnapshotCommand) }

type snapshotFlags struct {
	cluster  clusterFlags
	all      bool
	globalNS string
	policyNS string
	output   string
}

func newSnapshotCommand() *cobra.Command {
	var f snapshotFlags
	cmd := &cobra.Command{
		Use:   "snapshot [-n NAMESPACE | -A]",
		Short: "Write the cluster state Tollgate decides on, for tollgate eval or a bug report",
		Long: `Read from the live cluster everything Tollgate's decisions rest on and write it to stdout as
multi-document YAML (or a JSON List with -o json): Subscriptions, ClusterServiceVersions,
InstallPlans, OperatorGroups, OperatorConditions and UpgradeGates of the namespace (or of all
namespaces with -A), the CatalogSources visible there (the namespace's and the global catalog
namespace's), the operands of the installed CSVs, the PackageManifests the Subscriptions use,
and the policy ConfigMaps. Every object has apiVersion and kind; managedFields and the
last-applied annotation are dropped. Copied CSVs (OLM's copies in other namespaces) are left
out. Progress goes to stderr.

'tollgate eval --snapshot' and 'tollgate explain --snapshot' read the result.`,
		Example: `  # the state of one namespace, to attach to a bug report
  tollgate snapshot -n operators > state.yaml

  # the whole cluster, then evaluate it offline with your own policy changes
  tollgate snapshot -A > cluster.yaml
  tollgate eval --snapshot cluster.yaml --policy-dir policy/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSnapshot(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, cmd.Flags().Changed("namespace"))
		},
	}
	f.cluster.bind(cmd)
	cmd.Flags().BoolVarP(&f.all, "all-namespaces", "A", false, "snapshot every namespace")
	cmd.Flags().StringVar(&f.globalNS, "global-catalog-namespace", input.DefaultGlobalCatalogNamespace, "namespace whose CatalogSources every Subscription can use (always included)")
	cmd.Flags().StringVar(&f.policyNS, "policy-namespace", defaultPolicyNamespace, "namespace of the policy ConfigMaps (labelled tollgate.dev/policy) to include")
	cmd.Flags().StringVarP(&f.output, "output", "o", "yaml", "output format: yaml (multi-document) or json (a List)")
	return cmd
}

// snapshotKind is one kind to capture and where.
type snapshotKind struct {
	name  string // plural, for progress
	list  func() client.ObjectList
	scope func(ns string, all bool, f snapshotFlags) [][]client.ListOption // one List call each
	keep  func(client.Object) bool
}

var snapshotKinds = []snapshotKind{
	{name: "CatalogSources", list: func() client.ObjectList { return &v1alpha1.CatalogSourceList{} }, scope: catalogScope},
	{name: "OperatorGroups", list: func() client.ObjectList { return &operatorsv1.OperatorGroupList{} }, scope: nsScope},
	{name: "Subscriptions", list: func() client.ObjectList { return &v1alpha1.SubscriptionList{} }, scope: nsScope},
	{name: "ClusterServiceVersions", list: func() client.ObjectList { return &v1alpha1.ClusterServiceVersionList{} }, scope: nsScope, keep: notCopied},
	{name: "InstallPlans", list: func() client.ObjectList { return &v1alpha1.InstallPlanList{} }, scope: nsScope},
	{name: "OperatorConditions", list: func() client.ObjectList { return &operatorsv2.OperatorConditionList{} }, scope: nsScope},
	{name: "UpgradeGates", list: func() client.ObjectList { return &tollgatev1alpha1.UpgradeGateList{} }, scope: nsScope},
	{name: "policy ConfigMaps", list: func() client.ObjectList { return &corev1.ConfigMapList{} }, scope: policyScope},
}

func nsScope(ns string, all bool, _ snapshotFlags) [][]client.ListOption {
	if all {
		return [][]client.ListOption{nil}
	}
	return [][]client.ListOption{{client.InNamespace(ns)}}
}

// catalogScope is the namespace and the global catalog namespace: the catalogs visible there.
func catalogScope(ns string, all bool, f snapshotFlags) [][]client.ListOption {
	if all || f.globalNS == ns {
		return nsScope(ns, all, f)
	}
	return [][]client.ListOption{{client.InNamespace(ns)}, {client.InNamespace(f.globalNS)}}
}

// policyScope is the labelled ConfigMaps of the policy namespace, and no other ConfigMap.
func policyScope(_ string, _ bool, f snapshotFlags) [][]client.ListOption {
	return [][]client.ListOption{{client.InNamespace(f.policyNS), client.HasLabels{policysource.Label}}}
}

// notCopied drops the copies of a CSV OLM writes into every target namespace: they carry
// nothing the decision needs and multiply a snapshot's size.
func notCopied(obj client.Object) bool {
	_, copied := obj.GetLabels()["olm.copiedFrom"]
	return !copied
}

func runSnapshot(ctx context.Context, stdout, stderr io.Writer, f snapshotFlags, nsGiven bool) error {
	if err := checkOutput(f.output, "yaml", "json"); err != nil {
		return err
	}
	if f.all && nsGiven {
		return fmt.Errorf("give either -n NAMESPACE or -A, not both")
	}
	c, ns, cfg, err := f.cluster.connect()
	if err != nil {
		return err
	}
	where := "namespace " + ns
	if f.all {
		where = "all namespaces"
	}
	fmt.Fprintf(stderr, "snapshot of %s from %s\n", where, cfg.Host)
	objs, err := captureSnapshot(ctx, c, ns, f, stderr)
	if err != nil {
		return err
	}
	return writeObjects(stdout, f.output, objs, fmt.Sprintf("tollgate snapshot of %s, taken %s", where, time.Now().UTC().Format(time.RFC3339)))
}

// captureSnapshot lists every kind, then gathers each Subscription's input to add the
// operands and PackageManifests exactly as the manager sees them.
func captureSnapshot(ctx context.Context, c client.Client, ns string, f snapshotFlags, progress io.Writer) ([]map[string]any, error) {
	scheme := apis.NewScheme()
	var out []map[string]any
	seen := map[string]bool{}
	add := func(m map[string]any) {
		u := unstructured.Unstructured{Object: m}
		id := u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
		if !seen[id] {
			seen[id] = true
			out = append(out, clean(m))
		}
	}
	for _, k := range snapshotKinds {
		n := 0
		for _, opts := range k.scope(ns, f.all, f) {
			list := k.list()
			if err := c.List(ctx, list, opts...); err != nil {
				if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
					fmt.Fprintf(progress, "  %-24s skipped: %v\n", k.name, shortErr(err))
					break
				}
				return nil, fmt.Errorf("list %s: %w", k.name, err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				obj := it.(client.Object)
				if k.keep != nil && !k.keep(obj) {
					continue
				}
				m, err := typedToMap(obj, scheme)
				if err != nil {
					return nil, err
				}
				add(m)
				n++
			}
		}
		fmt.Fprintf(progress, "  %-24s %d\n", k.name, n)
	}

	// Operands and PackageManifests: what the input builder reads for each Subscription.
	var subs v1alpha1.SubscriptionList
	if err := c.List(ctx, &subs, nsScope(ns, f.all, f)[0]...); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("list Subscriptions: %w", err)
	}
	operands, pkgs := 0, 0
	b := &input.Builder{Reader: c, Config: input.Config{GlobalCatalogNamespace: f.globalNS}}
	for i := range subs.Items {
		in, err := b.Build(ctx, client.ObjectKeyFromObject(&subs.Items[i]))
		if err != nil {
			fmt.Fprintf(progress, "  operands of %s/%s skipped: %v\n", subs.Items[i].Namespace, subs.Items[i].Name, shortErr(err))
			continue
		}
		if in == nil {
			continue
		}
		for _, o := range in.Doc["operands"].([]any) {
			add(o.(map[string]any))
			operands++
		}
		if pm, ok := in.Doc["packageManifest"].(map[string]any); ok {
			add(pm)
			pkgs++
		}
	}
	fmt.Fprintf(progress, "  %-24s %d\n", "operands", operands)
	fmt.Fprintf(progress, "  %-24s %d\n", "PackageManifests", pkgs)
	return out, nil
}

func shortErr(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// typedToMap renders a typed object as the API server returns it, apiVersion and kind set.
func typedToMap(obj client.Object, scheme *runtime.Scheme) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return m, nil
}

// clean drops what is noise in a snapshot: managedFields and the last-applied annotation.
func clean(m map[string]any) map[string]any {
	unstructured.RemoveNestedField(m, "metadata", "managedFields")
	unstructured.RemoveNestedField(m, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")
	if a, found, _ := unstructured.NestedMap(m, "metadata", "annotations"); found && len(a) == 0 {
		unstructured.RemoveNestedField(m, "metadata", "annotations")
	}
	return m
}

// writeObjects writes objects as multi-document YAML headed by a comment, or a JSON List.
func writeObjects(w io.Writer, format string, objs []map[string]any, header string) error {
	slices.SortStableFunc(objs, func(a, b map[string]any) int {
		ua, ub := unstructured.Unstructured{Object: a}, unstructured.Unstructured{Object: b}
		return cmp.Or(cmp.Compare(kindRank(ua.GetKind()), kindRank(ub.GetKind())), cmp.Compare(ua.GetKind(), ub.GetKind()),
			cmp.Compare(ua.GetNamespace(), ub.GetNamespace()), cmp.Compare(ua.GetName(), ub.GetName()))
	})
	if format == "json" {
		items := make([]any, len(objs))
		for i := range objs {
			items[i] = objs[i]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	if _, err := fmt.Fprintf(w, "# %s\n", header); err != nil {
		return err
	}
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// kindRank orders a snapshot as a person reads it: catalogs and groups, then the operators.
func kindRank(kind string) int {
	order := []string{"ConfigMap", "CatalogSource", "OperatorGroup", "Subscription", "UpgradeGate", "ClusterServiceVersion", "InstallPlan", "OperatorCondition", "PackageManifest"}
	if i := slices.Index(order, kind); i >= 0 {
		return i
	}
	return len(order) // operands last
}
