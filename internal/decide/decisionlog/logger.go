package decisionlog

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/version"
)

// Sink receives events. Write must not block for long (a reconcile calls it); Run runs until
// ctx ends, then flushes what is pending and releases the sink. A Write after Run has ended
// returns an error wrapping ErrClosed, and an event it refuses is counted as dropped.
type Sink interface {
	Write(ev *Event) error
	Run(ctx context.Context) error
}

// Options configure a Logger.
type Options struct {
	// OmitInput logs events without their input (erased ["/input"]; input_digest stays).
	OmitInput bool
	// Labels are every event's labels; nil means Labels(InstanceID()).
	Labels map[string]string
	// Bundles returns the OPA bundles in service, location → manifest revision; nil: none.
	Bundles func() map[string]string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives write errors; the zero value means ctrl.Log.WithName("decision-log").
	Log logr.Logger
}

// Labels are the labels of an instance: app, id and Tollgate's version.
func Labels(id string) map[string]string {
	return map[string]string{"app": "tollgate", "id": id, "version": version.Get().Version}
}

// Logger logs decisions and approvals to a sink. A nil *Logger logs nothing, so callers need
// not check. It is a manager.Runnable that runs the sink (uploads, and the last flush when
// the manager stops). It needs no leader election, so controller-runtime stops it before the
// controllers: an approval under way then holds it open (Hold) until the approval is logged.
type Logger struct {
	sink Sink
	opts Options

	mu      sync.Mutex
	closing bool           // the logger stops: no approval may begin
	holds   sync.WaitGroup // approvals begun and not yet logged
}

// New logs to sink.
func New(sink Sink, opts Options) *Logger {
	if opts.Labels == nil {
		opts.Labels = Labels(InstanceID())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log.GetSink() == nil {
		opts.Log = ctrl.Log.WithName("decision-log")
	}
	return &Logger{sink: sink, opts: opts}
}

// Start runs the sink until ctx ends (manager.Runnable). Then it refuses new holds, waits for
// the approvals held to be logged, and only then stops the sink, which flushes and closes.
func (l *Logger) Start(ctx context.Context) error {
	sinkCtx, stopSink := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSink()
	ran := make(chan error, 1)
	go func() { ran <- l.sink.Run(sinkCtx) }()
	select {
	case err := <-ran: // the sink gave up on its own
		l.close()
		return err
	case <-ctx.Done():
	}
	l.close()
	stopSink()
	return <-ran
}

// NeedLeaderElection is false: the logger runs on every replica, only the leader decides.
func (l *Logger) NeedLeaderElection() bool { return false }

// Hold keeps the log open for one approval: the caller approves and logs the approval
// (Approval), then calls release, also when the approval failed. ok is false once the logger
// is stopping: then the caller must not approve, since the approval might not be logged. A nil
// *Logger logs nothing and holds nothing: ok is always true.
func (l *Logger) Hold() (release func(), ok bool) {
	if l == nil {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return nil, false
	}
	l.holds.Add(1)
	return sync.OnceFunc(l.holds.Done), true
}

// close refuses new holds and waits for the ones given to be released.
func (l *Logger) close() {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	l.holds.Wait()
}

// Decision logs a decision that changed a gate.
func (l *Logger) Decision(dec *approval.Decision) {
	if dec == nil || dec.Document == nil {
		return
	}
	l.Decided(dec.Doc, dec.Result)
}

// Decided logs the decision res on input, which changed a gate (an ExtensionGate's: the
// decision on its highest successor).
func (l *Logger) Decided(input map[string]any, res *engine.Result) {
	if l == nil || res == nil {
		return
	}
	ev := l.event(PathDecision, input, res.Revision)
	ev.Result = res
	if err := res.Err; err != nil {
		ev.Error = &EventError{Code: "tollgate_policy_error", Message: err.Error()}
	}
	l.write(ev)
}

// Pin logs a ClusterExtension's pin set to p.To, on the decision res on input (the document
// of the bundle of that version; for a pin at the installed version, the document that
// reported the extension).
func (l *Logger) Pin(input map[string]any, res *engine.Result, p PinResult) {
	if l == nil || input == nil || res == nil {
		return
	}
	ev := l.event(PathPin, input, res.Revision)
	p.Decision, p.Revision = res.Decision, res.Revision
	ev.Result = p
	l.write(ev)
}

// Approval logs the approval of plan, one of dec's pending plans.
func (l *Logger) Approval(dec *approval.Decision, plan *v1alpha1.InstallPlan) {
	if l == nil || dec == nil || dec.Document == nil || dec.Result == nil || plan == nil {
		return
	}
	ev := l.event(PathApproval, dec.Doc, dec.Result.Revision)
	res := ApprovalResult{
		Approved:    true,
		InstallPlan: engine.ObjectKey{Namespace: plan.Namespace, Name: plan.Name},
		CSVs:        plan.Spec.ClusterServiceVersionNames,
		Decision:    dec.Result.Decision,
		Revision:    dec.Result.Revision,
	}
	if dec.Subscription != nil {
		res.Subscription = engine.ObjectKey{Namespace: dec.Subscription.Namespace, Name: dec.Subscription.Name}
	}
	ev.Result = res
	l.write(ev)
}

// Bypass logs a bypass a gate recorded. It has no input (nothing was decided): its bundles
// and input_digest are those of the gate's decision then (b.Decision), which the input the
// gate had decided on and its logged decision event carry too.
func (l *Logger) Bypass(b BypassResult) {
	if l == nil {
		return
	}
	ev := l.base(PathBypass, b.Decision.PolicyRevision)
	ev.InputDigest = b.Decision.InputDigest
	ev.Result = b
	l.write(ev)
}

// event is an event of path on input, decided by the policy revision rev.
func (l *Logger) event(path string, input map[string]any, rev string) *Event {
	ev := l.base(path, rev)
	ev.Input, ev.InputDigest, ev.InputSHA256 = input, engine.Digest(input), InputSHA256(input)
	if l.opts.OmitInput {
		ev.Input, ev.Erased = nil, []string{ErasedInput}
	}
	return ev
}

// base is an event of path, without input, under the policy revision rev.
func (l *Logger) base(path, rev string) *Event {
	ev := &Event{
		Labels:      l.opts.Labels,
		DecisionID:  NewDecisionID(),
		Bundles:     map[string]BundleInfo{PolicyBundle: {Revision: rev}},
		Path:        path,
		RequestedBy: RequestedBy,
		Timestamp:   l.opts.Now().UTC(),
	}
	if l.opts.Bundles != nil {
		for name, r := range l.opts.Bundles() {
			ev.Bundles[name] = BundleInfo{Revision: r}
		}
	}
	return ev
}

func (l *Logger) write(ev *Event) {
	if err := l.sink.Write(ev); err != nil {
		l.opts.Log.Error(err, "decision not logged", "decisionID", ev.DecisionID, "path", ev.Path)
	}
}
