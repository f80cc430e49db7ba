package metricsauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
)

const (
	readerToken   = "reader-secret-token"   // authenticated, may get /metrics
	outsiderToken = "outsider-secret-token" // authenticated, may not
	brokenToken   = "broken-secret-token"   // the TokenReview fails with 500
)

// apiServer plays the API server's TokenReview and SubjectAccessReview endpoints and counts the
// reviews it answers.
type apiServer struct {
	mu      sync.Mutex
	reviews map[string]int // by resource: tokenreviews, subjectaccessreviews
	sars    []authorizationv1.SubjectAccessReviewSpec
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resource := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	a.mu.Lock()
	a.reviews[resource]++
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch tr.Spec.Token {
		case readerToken:
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
				Username: "system:serviceaccount:monitoring:prometheus", UID: "uid-1",
				Groups: []string{"system:serviceaccounts"}, Extra: map[string]authenticationv1.ExtraValue{"scope": {"a"}},
			}}
		case outsiderToken:
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "outsider"}}
		case brokenToken:
			http.Error(w, "etcd is down", http.StatusInternalServerError)
			return
		}
		tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenReview"
		_ = json.NewEncoder(w).Encode(tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.sars = append(a.sars, sar.Spec)
		a.mu.Unlock()
		na := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "system:serviceaccount:monitoring:prometheus" &&
			na != nil && na.Path == "/metrics" && na.Verb == "get"
		sar.APIVersion, sar.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
		_ = json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

func (a *apiServer) count(resource string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reviews[resource]
}

type fixture struct {
	api     *apiServer
	handler http.Handler
	gate    *gate
	now     time.Time
	logs    *bytes.Buffer
}

// newFixture wraps a handler that answers "metrics" in the filter, against a fake API server.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{api: &apiServer{reviews: map[string]int{}}, now: time.Unix(1e9, 0), logs: &bytes.Buffer{}}
	srv := httptest.NewServer(f.api)
	t.Cleanup(srv.Close)
	// JSON, since the clients would send protobuf; no client-side rate limit.
	cfg := &rest.Config{Host: srv.URL, QPS: -1, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	g, err := newGate(cfg, srv.Client())
	require.NoError(t, err)
	g.now = func() time.Time { return f.now }
	f.gate = g
	// Every verbosity is logged, so that the token check below covers all of it.
	log := funcr.New(func(prefix, args string) { f.logs.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 10})
	f.handler, err = g.filter(log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "metrics")
	}))
	require.NoError(t, err)
	return f
}

// get requests path with the given Authorization header (none when empty).
func (f *fixture) get(t *testing.T, path, authorization string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, http.NoBody)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	body := rec.Body.String()
	for _, token := range []string{readerToken, outsiderToken, brokenToken} {
		assert.NotContains(t, body, token, "the response echoes a token")
	}
	return rec.Code, body
}

func (f *fixture) assertNoTokenLogged(t *testing.T) {
	t.Helper()
	for _, token := range []string{readerToken, outsiderToken, brokenToken} {
		assert.NotContains(t, f.logs.String(), token, "a token was logged")
	}
}

func TestRefusesWithoutAValidBearerToken(t *testing.T) {
	f := newFixture(t)
	for name, header := range map[string]string{
		"no header":    "",
		"basic scheme": "Basic dXNlcjpwYXNz",
		"empty token":  "Bearer ",
		"no token":     "Bearer",
		"two tokens":   "Bearer " + readerToken + " " + readerToken,
		"unknown":      "Bearer not-a-token",
	} {
		code, body := f.get(t, "/metrics", header)
		assert.Equal(t, http.StatusUnauthorized, code, name)
		assert.NotContains(t, body, "metrics", name)
	}
	// Only the unknown token is worth a review; a malformed header is refused at once.
	assert.Equal(t, 1, f.api.count("tokenreviews"))
	assert.Zero(t, f.api.count("subjectaccessreviews"))
	f.assertNoTokenLogged(t)
}

func TestAuthorizesTheUserForThePathAndVerb(t *testing.T) {
	f := newFixture(t)
	code, body := f.get(t, "/metrics", "bearer "+readerToken) // the scheme is case-insensitive
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "metrics", body)
	require.Len(t, f.api.sars, 1)
	assert.Equal(t, authorizationv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		User:                  "system:serviceaccount:monitoring:prometheus",
		Groups:                []string{"system:serviceaccounts"},
		UID:                   "uid-1",
		Extra:                 map[string]authorizationv1.ExtraValue{"scope": {"a"}},
	}, f.api.sars[0])

	code, body = f.get(t, "/metrics", "Bearer "+outsiderToken)
	assert.Equal(t, http.StatusForbidden, code)
	assert.NotContains(t, body, "metrics")
	// The reader may get /metrics, not another path.
	code, _ = f.get(t, "/debug", "Bearer "+readerToken)
	assert.Equal(t, http.StatusForbidden, code)
	f.assertNoTokenLogged(t)
}

func TestCachesAnswersForAWhile(t *testing.T) {
	f := newFixture(t)
	for range 3 {
		code, _ := f.get(t, "/metrics", "Bearer "+readerToken)
		require.Equal(t, http.StatusOK, code)
		code, _ = f.get(t, "/metrics", "Bearer "+outsiderToken)
		require.Equal(t, http.StatusForbidden, code)
		code, _ = f.get(t, "/metrics", "Bearer not-a-token")
		require.Equal(t, http.StatusUnauthorized, code)
	}
	assert.Equal(t, 3, f.api.count("tokenreviews"), "one review per token")
	assert.Equal(t, 2, f.api.count("subjectaccessreviews"), "one review per authenticated token")

	// Refusals expire first; the allowed answer lasts a minute.
	f.now = f.now.Add(DenyTTL)
	f.get(t, "/metrics", "Bearer "+readerToken)
	f.get(t, "/metrics", "Bearer "+outsiderToken)
	assert.Equal(t, 4, f.api.count("tokenreviews"))
	f.now = f.now.Add(AllowTTL - DenyTTL)
	code, _ := f.get(t, "/metrics", "Bearer "+readerToken)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, 5, f.api.count("tokenreviews"))
	assert.Equal(t, 4, f.api.count("subjectaccessreviews"))
}

func TestFailsClosedWithoutCachingErrors(t *testing.T) {
	f := newFixture(t)
	for range 2 {
		code, body := f.get(t, "/metrics", "Bearer "+brokenToken)
		assert.Equal(t, http.StatusInternalServerError, code)
		assert.NotContains(t, body, "metrics")
		assert.NotContains(t, body, "etcd", "the API server's error reaches the caller")
	}
	assert.Equal(t, 2, f.api.count("tokenreviews"), "an error was cached")
	assert.Contains(t, f.logs.String(), "Cannot authorize a metrics request")
	f.assertNoTokenLogged(t)
}

func TestCacheIsBounded(t *testing.T) {
	f := newFixture(t)
	for i := range maxEntries + 10 {
		f.get(t, "/metrics", fmt.Sprintf("Bearer unknown-%d", i))
	}
	f.gate.mu.Lock()
	defer f.gate.mu.Unlock()
	assert.Len(t, f.gate.cache, maxEntries)
}
