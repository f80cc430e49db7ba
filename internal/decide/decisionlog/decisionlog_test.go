package decisionlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var (
	at     = time.Date(2026, 11, 20, 12, 0, 0, 123456789, time.UTC)
	labels = map[string]string{"app": "tollgate", "id": "tollgate-7d9f-0a1b2c3d", "version": "v0.1.0"}
	uuid   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// heldDecision is a small decision: one standing denial.
func heldDecision() *approval.Decision {
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "etcd"}}
	doc := map[string]any{
		"now":          "2026-11-20T12:00:00Z",
		"subscription": map[string]any{"metadata": map[string]any{"namespace": "demo", "name": "etcd"}},
	}
	return &approval.Decision{
		Document: &input.Document{Doc: doc, Subscription: sub},
		Result: &engine.Result{
			State:    "UpgradePending",
			Revision: "0123456789ab",
			Decision: engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: "OperatorNotUpgradeable", Message: "the operator says it is not upgradeable: migrating storage"}}}},
		},
	}
}

func newLogger(sink decisionlog.Sink, omitInput bool) *decisionlog.Logger {
	return decisionlog.New(sink, decisionlog.Options{
		OmitInput: omitInput,
		Labels:    labels,
		Bundles: func() map[string]string {
			return map[string]string{"https://bundles.example.com/packs.tar.gz": "2026-11-01"}
		},
		Now: func() time.Time { return at },
		Log: logr.Discard(),
	})
}

// golden compares the event line got, its decision_id made fixed, with testdata/name, in
// the order of its fields.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var ev map[string]any
	require.NoError(t, json.Unmarshal(got, &ev))
	id, _ := ev["decision_id"].(string)
	assert.Regexp(t, uuid, id)
	got = bytes.Replace(got, []byte(id), []byte("00000000-0000-4000-8000-000000000000"), 1)
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, bytes.TrimSpace(got), "", "  "))
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, pretty.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), pretty.String())
}

func TestEventShape(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(decisionlog.NewWriterSink(&buf), false)
	dec := heldDecision()
	log.Decision(dec)
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "install-etcd-v0-9-4"}}
	plan.Spec.ClusterServiceVersionNames = []string{"etcd.v0.9.4"}
	dec.Result.Decision = engine.Decision{Allowed: true}
	log.Approval(dec, plan)

	lines := strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 2, "one line per event")
	assert.Contains(t, lines[0], `"timestamp":"2026-11-20T12:00:00.123456789Z"`, "RFC 3339 with nanoseconds, as OPA")
	golden(t, "decision.json", []byte(lines[0]))
	golden(t, "approval.json", []byte(lines[1]))

	buf.Reset()
	newLogger(decisionlog.NewWriterSink(&buf), true).Decision(heldDecision())
	golden(t, "decision-without-input.json", buf.Bytes())
	assert.Equal(t, engine.Digest(heldDecision().Doc), decode(t, buf.Bytes())["input_digest"], "the gate's status.decision.inputDigest")
}

// TestABypassIsLoggedWithoutInput: a bypass records what someone else did; it carries the
// gate's decision then (its bundles and input_digest), and reads back as an event.
func TestABypassIsLoggedWithoutInput(t *testing.T) {
	var buf bytes.Buffer
	set := metav1.NewTime(time.Date(2026, 11, 20, 11, 30, 0, 0, time.UTC))
	newLogger(decisionlog.NewWriterSink(&buf), false).Bypass(decisionlog.BypassResult{
		GateKind: "UpgradeGate", Gate: engine.ObjectKey{Namespace: "demo", Name: "etcd"},
		Bypass: tollgatev1alpha1.Bypass{
			Kind: tollgatev1alpha1.BypassKindInstallPlan, Name: "install-etcd-v0-9-4", UID: "6a1f2b3c-0000-4000-8000-000000000001",
			Field: tollgatev1alpha1.BypassFieldApproved, To: "true", By: "kubectl-patch", At: &set,
			SeenAt:   metav1.NewTime(time.Date(2026, 11, 20, 11, 30, 2, 0, time.UTC)),
			Decision: tollgatev1alpha1.BypassDecision{Codes: []string{"OperatorNotUpgradeable"}, PolicyRevision: "0123456789ab", InputDigest: "9f86d081884c"},
		},
	})
	golden(t, "bypass.json", buf.Bytes())
	logged, err := decisionlog.Read(&buf)
	require.NoError(t, err)
	require.Len(t, logged, 1)
	assert.Equal(t, decisionlog.PathBypass, logged[0].Event.Path)
	assert.Nil(t, logged[0].Event.Input)
	assert.Empty(t, logged[0].Event.Erased, "no input was erased: there was none")
}

func TestPolicyErrorIsLoggedAsError(t *testing.T) {
	var buf bytes.Buffer
	dec := heldDecision()
	dec.Result = engine.Unavailable("0123456789ab", errors.New("the admin policy does not compile"))
	newLogger(decisionlog.NewWriterSink(&buf), false).Decision(dec)
	ev := decode(t, buf.Bytes())
	assert.Equal(t, map[string]any{"code": "tollgate_policy_error", "message": "the admin policy does not compile"}, ev["error"])
}

func TestNilLoggerLogsNothing(t *testing.T) {
	var log *decisionlog.Logger
	log.Decision(heldDecision())
	log.Approval(heldDecision(), &v1alpha1.InstallPlan{})
	log.Bypass(decisionlog.BypassResult{})
}

func TestWriterSinkLinesNeverInterleave(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(decisionlog.NewWriterSink(&buf), false)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 20 {
				log.Decision(heldDecision())
			}
		})
	}
	wg.Wait()
	logged, err := decisionlog.Read(&buf)
	require.NoError(t, err)
	require.Len(t, logged, 400)
	ids := map[string]bool{}
	for _, l := range logged {
		ids[l.Event.DecisionID] = true
	}
	assert.Len(t, ids, 400, "every decision_id is new")
}

func TestFileSinkAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	for range 2 {
		sink, err := decisionlog.Open(path, decisionlog.HTTPOptions{})
		require.NoError(t, err)
		newLogger(sink, false).Decision(heldDecision())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.NoError(t, sink.Run(ctx), "closes the file")
	}
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	logged, err := decisionlog.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, logged, 2, "the second run appends")
}

func TestOpenRefusesNothing(t *testing.T) {
	_, err := decisionlog.Open("", decisionlog.HTTPOptions{})
	assert.Error(t, err)
	_, err = decisionlog.Open(filepath.Join(t.TempDir(), "no", "such", "dir", "log"), decisionlog.HTTPOptions{})
	assert.Error(t, err)
	_, err = decisionlog.Open("https://", decisionlog.HTTPOptions{})
	assert.Error(t, err)
}

func TestReadNamesTheBadLine(t *testing.T) {
	var buf bytes.Buffer
	newLogger(decisionlog.NewWriterSink(&buf), false).Decision(heldDecision())
	buf.WriteString("\nnot json\n")
	_, err := decisionlog.Read(&buf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 3")
}

// repeatReader reads its byte forever.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestReadNamesALineLongerThanTheCap(t *testing.T) {
	var buf bytes.Buffer
	newLogger(decisionlog.NewWriterSink(&buf), false).Decision(heldDecision())
	buf.WriteString("\n")
	for _, tt := range []struct {
		scenario string
		size     int // of line 3, without its newline
		err      string
	}{
		{"a line that fills the cap with its newline is read (and is no event)", decisionlog.MaxLine - 1, "line 3: not a decision log event"},
		{"a line one byte longer", decisionlog.MaxLine, "line 3: longer than the cap of 64 MiB"},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			line := io.LimitReader(repeatReader(' '), int64(tt.size-1))
			_, err := decisionlog.Read(io.MultiReader(bytes.NewReader(buf.Bytes()), strings.NewReader("x"), line, strings.NewReader("\n")))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.err), "%q starts with %q", err, tt.err)
		})
	}
}

func decode(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var ev map[string]any
	require.NoError(t, json.Unmarshal(line, &ev))
	return ev
}

func TestReadFileReadsTheLogAtAPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	var buf bytes.Buffer
	newLogger(decisionlog.NewWriterSink(&buf), false).Decision(heldDecision())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
	logged, err := decisionlog.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, logged, 1)
	_, err = decisionlog.ReadFile(filepath.Join(t.TempDir(), "missing.log"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
