package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// A decision is logged as the manager logs it, read back, and replayed twice: with the
// policies it was decided with, it comes out the same; with a candidate policy that holds
// every upgrade, it comes out differently.
func ExampleReplay() {
	ctx := context.Background()
	embedded, err := engine.New(ctx, engine.Options{})
	if err != nil {
		panic(err)
	}
	var log bytes.Buffer
	if err := decide(ctx, embedded, &log); err != nil {
		panic(err)
	}
	events, err := decisionlog.Read(&log)
	if err != nil {
		panic(err)
	}
	candidate, err := engine.New(ctx, engine.Options{Modules: []engine.Module{{Path: "denyall.rego", Source: `package tollgate.packs.denyall

deny contains {"code": "DenyAll", "message": "every upgrade is held"} if true
`}}})
	if err != nil {
		panic(err)
	}
	for _, policies := range []*engine.Engine{embedded, candidate} {
		for _, ev := range replay.Replay(ctx, policies, events).Events {
			fmt.Printf("line %d, %s/%s: logged %s, replayed %s: %s\n", ev.Line, ev.Namespace, ev.Name, ev.Logged, ev.Replayed, ev.Outcome)
		}
	}
	// Output:
	// line 1, team-a/etcd: logged held: OperatorNotUpgradeable, replayed held: OperatorNotUpgradeable: same
	// line 1, team-a/etcd: logged held: OperatorNotUpgradeable, replayed held: DenyAll, OperatorNotUpgradeable: DIFFERENT
}

// decide decides the held snapshot's Subscription as the manager does, and logs the decision.
func decide(ctx context.Context, policies *engine.Engine, log *bytes.Buffer) error {
	snap, err := snapshot.Load(repo.Path("test", "testdata", "snapshots", "held.yaml"))
	if err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: "team-a", Name: "etcd"}
	var sub v1alpha1.Subscription
	if err := snap.Get(ctx, key, &sub); err != nil {
		return err
	}
	if err := snap.Add(gatestatus.New(&sub)); err != nil {
		return err
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	d := &approval.Decider{Reader: snap, Policies: policies, Now: func() time.Time { return now }}
	dec, err := d.Decide(ctx, key)
	if err != nil {
		return err
	}
	decisionlog.New(decisionlog.NewWriterSink(log), decisionlog.Options{Log: logr.Discard()}).Decision(dec)
	return nil
}
