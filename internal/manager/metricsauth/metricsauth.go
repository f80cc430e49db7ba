// Package metricsauth decides who may read the metrics endpoint: a caller with a bearer token
// the API server accepts (TokenReview) for a user that RBAC lets use the request's verb on its
// non-resource URL (SubjectAccessReview), e.g. get /metrics through the tollgate-metrics-reader
// ClusterRole. The manager needs to create both kinds of review (see the RBAC markers in
// controllers/setup.go).
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	// AllowTTL is how long an allowed caller is let in without asking the API server again: a
	// scraper calling every 15 seconds costs two reviews a minute, not eight.
	AllowTTL = time.Minute
	// DenyTTL is how long a refusal is kept: short, so that a new RoleBinding takes effect soon,
	// yet long enough that a misconfigured scraper does not flood the API server.
	DenyTTL = 10 * time.Second
	// maxEntries bounds the cache: each distinct token would otherwise add an entry.
	maxEntries = 1024
	// reviewTimeout bounds both reviews of one request together.
	reviewTimeout = 10 * time.Second
)

// FilterProvider returns the filter that lets only authorized callers through; its signature
// is controller-runtime's metricsserver.Options.FilterProvider.
func FilterProvider(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	g, err := newGate(c, httpClient)
	if err != nil {
		return nil, err
	}
	return g.filter, nil
}

func newGate(c *rest.Config, httpClient *http.Client) (*gate, error) {
	authn, err := authenticationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create the TokenReview client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create the SubjectAccessReview client: %w", err)
	}
	return &gate{
		tokens: authn.TokenReviews(),
		access: authz.SubjectAccessReviews(),
		now:    time.Now,
		cache:  map[[sha256.Size]byte]entry{},
	}, nil
}

// gate answers, for a token, a verb and a path, with the status the request deserves: 200 to
// pass through, 401 or 403 to refuse.
type gate struct {
	tokens authenticationclient.TokenReviewInterface
	access authorizationclient.SubjectAccessReviewInterface
	now    func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]entry
}

type entry struct {
	status  int
	expires time.Time
}

func (g *gate) filter(log logr.Logger, handler http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearerToken(req.Header.Get("Authorization"))
		if !ok {
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
			return
		}
		status, err := g.decide(req.Context(), token, strings.ToLower(req.Method), req.URL.Path)
		if err != nil {
			// Fail closed: without an answer from the API server nobody is let in. The error
			// names the review, never the token.
			log.Error(err, "Cannot authorize a metrics request", "path", req.URL.Path)
			http.Error(w, "authorization failed", http.StatusInternalServerError)
			return
		}
		if status != http.StatusOK {
			log.V(4).Info("Refused a metrics request", "status", status, "path", req.URL.Path)
			http.Error(w, http.StatusText(status), status)
			return
		}
		handler.ServeHTTP(w, req)
	}), nil
}

// bearerToken reads "Bearer <token>"; the scheme is case-insensitive (RFC 7235).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// decide returns the cached status for token, verb and path, or asks the API server and caches
// its answer. Errors are not cached: the next scrape asks again.
func (g *gate) decide(ctx context.Context, token, verb, path string) (int, error) {
	// The key is a hash: the cache never holds a token, and the NUL bytes keep the parts apart.
	key := sha256.Sum256([]byte(token + "\x00" + verb + "\x00" + path))
	g.mu.Lock()
	e, ok := g.cache[key]
	g.mu.Unlock()
	if ok && g.now().Before(e.expires) {
		return e.status, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	status, err := g.review(ctx, token, verb, path)
	if err != nil {
		return 0, err
	}
	ttl := DenyTTL
	if status == http.StatusOK {
		ttl = AllowTTL
	}
	g.store(key, entry{status: status, expires: g.now().Add(ttl)})
	return status, nil
}

// review authenticates token and authorizes its user for verb on path.
func (g *gate) review(ctx context.Context, token, verb, path string) (int, error) {
	tr, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("create a TokenReview: %w", err)
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := g.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		User:                  u.Username,
		Groups:                u.Groups,
		UID:                   u.UID,
		Extra:                 extra,
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("create a SubjectAccessReview for user %q: %w", u.Username, err)
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

// store caches e under key. A full cache first drops its expired entries, then, if still full,
// any one entry: the bound matters more than which entry goes.
func (g *gate) store(key [sha256.Size]byte, e entry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.cache) >= maxEntries {
		now := g.now()
		for k, old := range g.cache {
			if !now.Before(old.expires) {
				delete(g.cache, k)
			}
		}
	}
	if len(g.cache) >= maxEntries {
		for k := range g.cache {
			delete(g.cache, k)
			break
		}
	}
	g.cache[key] = e
}
