package badpolicies

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

const (
	globalNS = "olm"
	policyNS = "tollgate-system"
)

var (
	env      *controlplane.Env
	policies *controllers.Policies
	// errorLog keeps the errors the manager logs, so a test can check what it told the admins.
	errorLog = &errorSink{mu: &sync.Mutex{}, errors: &[]loggedError{}}
)

func TestMain(m *testing.M) {
	os.Exit(olmplay.Suite{
		Log:             logr.New(errorLog),
		Namespaces:      []string{globalNS, policyNS},
		PolicyNamespace: policyNS,
		SetUp: func(_ context.Context, e *controlplane.Env) (*rest.Config, error) {
			env = e
			return e.Config, nil
		},
		Started: func(p *controllers.Policies) { policies = p },
	}.Run(m))
}

// loggedError is one error the manager logged.
type loggedError struct {
	msg, err string
	kv       []any
}

// errorSink is a logr.LogSink that keeps the errors, with their key-value pairs, and drops
// the rest.
type errorSink struct {
	mu     *sync.Mutex
	errors *[]loggedError
	kv     []any
}

func (s *errorSink) Init(logr.RuntimeInfo)        {}
func (s *errorSink) Enabled(int) bool             { return false }
func (s *errorSink) Info(int, string, ...any)     {}
func (s *errorSink) WithName(string) logr.LogSink { return s }

func (s *errorSink) WithValues(kv ...any) logr.LogSink {
	return &errorSink{mu: s.mu, errors: s.errors, kv: append(append([]any{}, s.kv...), kv...)}
}

func (s *errorSink) Error(err error, msg string, kv ...any) {
	text := ""
	if err != nil {
		text = err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.errors = append(*s.errors, loggedError{msg: msg, err: text, kv: append(append([]any{}, s.kv...), kv...)})
}

// logged says whether the manager logged an error msg with the key-value pair key, value
// whose error says text.
func (s *errorSink) logged(msg, key, value, text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range *s.errors {
		if e.msg != msg || !strings.Contains(e.err, text) {
			continue
		}
		for i := 0; i+1 < len(e.kv); i += 2 {
			if e.kv[i] == key && e.kv[i+1] == value {
				return true
			}
		}
	}
	return false
}
