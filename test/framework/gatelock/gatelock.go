// Package gatelock installs config/components/gate-lock (Tollgate's admission policies that lock
// approvals, pins and approval modes) on a test control plane, as an admin's overlay would, and
// waits until the API server enforces every one of its policies.
package gatelock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// Overlay is the kustomization that includes the component, as an admin's overlay does.
const Overlay = "test/testdata/gate-lock"

// PolicyPrefix begins the name of each of the component's policies, which a refusal names.
const PolicyPrefix = "tollgate-gate-lock"

// BreakGlassGroup is the component's default break-glass group.
const BreakGlassGroup = "tollgate:break-glass"

// probeNamespace holds the objects the probes update, which are gone once Install returns.
const probeNamespace = "gate-lock-probe"

// Install applies the overlay with c (the namespace of its parameters must exist) and waits
// until every policy about a kind the control plane serves refuses what it is about. It must
// run before OLM and Tollgate start: the probes create an InstallPlan, a Subscription and a
// ClusterExtension (those served), refused updates of which are dry-run as a user who is
// neither Tollgate nor in the break-glass group; then it deletes them.
func Install(ctx context.Context, cfg *rest.Config, c client.Client) error {
	objs, err := controlplane.Kustomize(Overlay)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace}}
	if err := c.Create(ctx, ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", probeNamespace, err)
	}
	return waitRefused(ctx, cfg, c, []probe{planProbe(), runProbe(), subscriptionProbe(), extensionProbe()})
}

// A probe is an object the lock guards and a change of it the lock refuses.
type probe struct {
	obj    *unstructured.Unstructured
	change string // a JSON merge patch
	status bool   // of the status subresource
}

// waitRefused creates each probe's object, then dry-runs its change as an outsider until the API
// server refuses every one by the lock, for a minute at most; the objects are deleted after.
func waitRefused(ctx context.Context, cfg *rest.Config, c client.Client, probes []probe) error {
	outsider, err := Client(cfg, "gate-lock-probe", "system:masters")
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range probes {
			_ = c.Delete(context.WithoutCancel(ctx), p.obj)
		}
	}()
	var served []probe
	for _, p := range probes {
		err := c.Create(ctx, p.obj)
		if apimeta.IsNoMatchError(err) {
			continue // OLM v0's kinds are not served beside OLM v1, nor OLM v1's beside OLM v0
		}
		if err != nil {
			return fmt.Errorf("create probe %s: %w", p.obj.GetKind(), err)
		}
		served = append(served, p)
	}
	deadline := time.Now().Add(time.Minute)
	for _, p := range served {
		for {
			err := p.dryRun(ctx, outsider)
			if Refused(err) {
				break
			}
			if err != nil && !apierrors.IsConflict(err) {
				return fmt.Errorf("probe %s: %w", p.obj.GetKind(), err)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the gate lock did not refuse a change of a %s within a minute", p.obj.GetKind())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// dryRun dry-runs the probe's change as c.
func (p probe) dryRun(ctx context.Context, c client.Client) error {
	patch := client.RawPatch(types.MergePatchType, []byte(p.change))
	if p.status {
		return c.Status().Patch(ctx, p.obj.DeepCopy(), patch, client.DryRunAll)
	}
	return c.Patch(ctx, p.obj.DeepCopy(), patch, client.DryRunAll)
}

// Refused says whether err is the lock's refusal.
func Refused(err error) bool {
	var status apierrors.APIStatus
	return err != nil && errors.As(err, &status) && (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) &&
		strings.Contains(status.Status().Message, PolicyPrefix)
}

// Client is a client of cfg, knowing Tollgate's and OLM's kinds, that acts as user, in groups.
func Client(cfg *rest.Config, user string, groups ...string) (client.Client, error) {
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(as, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return nil, fmt.Errorf("client as %s: %w", user, err)
	}
	return c, nil
}

// BreakGlass is a client of cfg that acts as an admin on call in the break-glass group.
func BreakGlass(cfg *rest.Config) (client.Client, error) {
	return Client(cfg, "on-call", "system:masters", BreakGlassGroup)
}

func object(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName(name)
	if kind != "ClusterExtension" {
		u.SetNamespace(probeNamespace)
	}
	return u
}

func planProbe() probe {
	return probe{
		obj: object("operators.coreos.com/v1alpha1", "InstallPlan", "probe", map[string]any{
			"approval": "Manual", "approved": false, "clusterServiceVersionNames": []any{"probe.v1.0.0"},
		}),
		change: `{"spec":{"approved":true}}`,
	}
}

// runProbe moves an unapproved plan to Installing, which OLM would run.
func runProbe() probe {
	p := planProbe()
	p.obj.SetName("probe-run")
	return probe{obj: p.obj, change: `{"status":{"phase":"Installing","catalogSources":["probe"]}}`, status: true}
}

func subscriptionProbe() probe {
	return probe{
		obj: object("operators.coreos.com/v1alpha1", "Subscription", "probe", map[string]any{
			"name": "probe", "source": "probe", "sourceNamespace": probeNamespace, "installPlanApproval": "Manual",
		}),
		change: `{"spec":{"installPlanApproval":"Automatic"}}`,
	}
}

func extensionProbe() probe {
	u := object("olm.operatorframework.io/v1", "ClusterExtension", "gate-lock-probe", map[string]any{
		"namespace":      probeNamespace,
		"serviceAccount": map[string]any{"name": "probe"},
		"source": map[string]any{
			"sourceType": "Catalog",
			"catalog":    map[string]any{"packageName": "probe", "version": "1.0.0"},
		},
	})
	u.SetAnnotations(map[string]string{"tollgate.dev/pin": `{"version":"1.0.0","installed":"1.0.0","pinnedAt":"2026-01-01T00:00:00Z"}`})
	return probe{obj: u, change: `{"spec":{"source":{"catalog":{"version":"2.0.0"}}}}`}
}
