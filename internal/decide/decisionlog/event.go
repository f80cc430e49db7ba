package decisionlog

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
)

// Paths of Tollgate's events.
const (
	// PathDecision is a decision's path: the query data.tollgate.main.result, as OPA writes
	// a data path.
	PathDecision = "tollgate/main/result"
	// PathApproval is an InstallPlan approval's path.
	PathApproval = "tollgate/approval"
	// PathPin is the path of a ClusterExtension's pin, set by its ExtensionGate.
	PathPin = "tollgate/pin"
	// PathBypass is the path of a bypass: an InstallPlan approved, or a ClusterExtension's
	// pin moved, by someone else than Tollgate. It records what happened; nothing is decided.
	PathBypass = "tollgate/bypass"
	// RequestedBy is every event's requested_by.
	RequestedBy = "tollgate"
	// PolicyBundle is the key under bundles of the policy revision (engine.Engine.Revision).
	PolicyBundle = "tollgate"
	// ErasedInput is the erased entry of an event logged without its input.
	ErasedInput = "/input"
)

// Event is one decision log entry: the fields of OPA's EventV1 that Tollgate sets, with
// OPA's JSON names, plus input_digest.
type Event struct {
	Labels      map[string]string     `json:"labels"`
	DecisionID  string                `json:"decision_id"`
	Bundles     map[string]BundleInfo `json:"bundles,omitempty"`
	Path        string                `json:"path"`
	Input       map[string]any        `json:"input,omitempty"`
	Result      any                   `json:"result,omitempty"`
	Erased      []string              `json:"erased,omitempty"`
	Error       *EventError           `json:"error,omitempty"`
	RequestedBy string                `json:"requested_by"`
	Timestamp   time.Time             `json:"timestamp"`
	// InputDigest is engine.Digest of the input: the gate's status.decision.inputDigest. It
	// names the state decided on, and leaves out the clock and what Tollgate wrote itself.
	InputDigest string `json:"input_digest,omitempty"`
	// InputSHA256 is InputSHA256 of the input: all of what the decision read, its clock
	// included, so that a replay sees any edit of it.
	InputSHA256 string `json:"input_sha256,omitempty"`
}

// BundleInfo is a bundle's entry under bundles.
type BundleInfo struct {
	Revision string `json:"revision,omitempty"`
}

// EventError is set when the result is the PolicyError fallback (engine.Result.Err).
type EventError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ApprovalResult is the result of an approval event.
type ApprovalResult struct {
	Approved     bool             `json:"approved"`
	InstallPlan  engine.ObjectKey `json:"installPlan"`
	CSVs         []string         `json:"csvs"`
	Subscription engine.ObjectKey `json:"subscription"`
	// Decision is the decision that allowed the approval.
	Decision engine.Decision `json:"decision"`
	Revision string          `json:"revision"`
}

// PinResult is the result of a pin event.
type PinResult struct {
	// Extension is the ClusterExtension (and its ExtensionGate).
	Extension string `json:"extension"`
	// From is the pin before, To the pin set, Installed the version installed then.
	From      string `json:"from"`
	To        string `json:"to"`
	Installed string `json:"installed"`
	// Reason is the gate's PinOwned reason: Moved, Reclaimed or Adopted.
	Reason string `json:"reason"`
	// Decision is the decision on the version pinned.
	Decision engine.Decision `json:"decision"`
	Revision string          `json:"revision"`
}

// BypassResult is the result of a bypass event: what a gate recorded (tollgatev1alpha1.Bypass:
// the object, what changed, the field manager and when, and what the gate's policies said
// then, as "decision": allowed, codes, policyRevision, inputDigest) and the gate.
type BypassResult struct {
	// GateKind is UpgradeGate or ExtensionGate; Gate names it (an ExtensionGate has no
	// namespace).
	GateKind string           `json:"gateKind"`
	Gate     engine.ObjectKey `json:"gate"`
	tollgatev1alpha1.Bypass
}

// NewDecisionID is 16 random bytes as a UUID (version 4).
func NewDecisionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// InstanceID identifies this process in labels.id: the pod's name (POD_NAME) or the host
// name, and a random suffix, so two runs on one host differ.
func InstanceID() string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	if name == "" {
		return hex.EncodeToString(b[:])
	}
	return name + "-" + hex.EncodeToString(b[:])
}

// InputSHA256 is the sha256 (hex) of input's JSON (object keys sorted): all of it, where
// engine.Digest leaves out input.now and the gate's status. A decision reads nothing but its
// input, so two inputs with the same InputSHA256 are decided the same by the same policies.
func InputSHA256(input map[string]any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(input); err != nil {
		// Not JSON data: such an input also fails evaluation; give it a digest of its own.
		fmt.Fprintf(h, "unencodable: %v", err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// encode is ev as one JSON line.
func encode(ev *Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return nil, fmt.Errorf("encode decision log event: %w", err)
	}
	return buf.Bytes(), nil
}

// Logged is one event read back from a decision log.
type Logged struct {
	// Line is the event's line number in the log.
	Line  int
	Event Event
	// Decision is result.decision as logged (both kinds of event carry one); nil when absent.
	Decision *engine.Decision
}

// MaxLine bounds one event's line when reading a log back.
const MaxLine = 64 << 20

// ReadFile reads the decision log at path, as Read; "-" is standard input.
func ReadFile(path string) ([]Logged, error) {
	if path == "-" {
		return Read(os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Read(f)
}

// Read reads a decision log: one JSON event per line (blank lines are skipped). Numbers in
// the input stay exact (json.Number). A line that is no event, or that is longer than
// MaxLine, is an error naming it.
func Read(r io.Reader) ([]Logged, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var out []Logged
	n := 1
	for ; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		l, err := parse(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		l.Line = n
		out = append(out, l)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d: longer than the cap of %d MiB", n, MaxLine>>20)
	} else if err != nil {
		return nil, fmt.Errorf("read the decision log: %w", err)
	}
	return out, nil
}

func parse(line []byte) (Logged, error) {
	var l Logged
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&l.Event); err != nil {
		return l, fmt.Errorf("not a decision log event: %w", err)
	}
	var res struct {
		Result struct {
			Decision *engine.Decision `json:"decision"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &res); err != nil {
		return l, fmt.Errorf("result.decision: %w", err)
	}
	l.Decision = res.Result.Decision
	if l.Event.DecisionID == "" || l.Event.Path == "" {
		return l, fmt.Errorf("not a decision log event: no decision_id or path")
	}
	return l, nil
}
