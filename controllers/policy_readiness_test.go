package controllers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

func TestPoliciesReadyOnceTheFirstLoadWasTried(t *testing.T) {
	p := NewPolicies(nil)
	require.ErrorIs(t, p.Ready(nil), errPoliciesNotLoaded, "not ready before the admin policy was loaded")

	p.serve(nil, nil)
	assert.NoError(t, p.Ready(nil), "ready once the first load was tried")
}

func TestPoliciesReadyEvenWhenTheFirstLoadFailed(t *testing.T) {
	// A policy that does not compile fails every decision closed (PolicyError) and is reported
	// in status and metrics; the replica itself is ready, so the admin can see and fix it.
	p := NewPolicies(nil)
	p.serve(nil, assert.AnError)
	assert.NoError(t, p.Ready(nil))
}

func TestReadyzFailsUntilThePoliciesAreLoaded(t *testing.T) {
	p := NewPolicies(nil)
	readyz := http.StripPrefix("/readyz", &healthz.Handler{Checks: map[string]healthz.Checker{"policies-loaded": p.Ready}})
	get := func() int {
		rec := httptest.NewRecorder()
		readyz.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	assert.Equal(t, http.StatusInternalServerError, get())
	p.serve(nil, nil)
	assert.Equal(t, http.StatusOK, get())
}

func TestManagerOptions(t *testing.T) {
	tests := map[string]struct {
		serving      ServingOptions
		secure       bool
		withFilter   bool
		leaderElects bool
	}{
		"by default metrics are served over HTTPS behind authentication and authorization": {
			serving: ServingOptions{MetricsAddr: ":8443", MetricsSecure: true, ProbeAddr: ":8081", LeaderElect: true},
			secure:  true, withFilter: true, leaderElects: true,
		},
		"--metrics-secure=false serves plain HTTP to anyone": {
			serving: ServingOptions{MetricsAddr: ":8080", ProbeAddr: ":8081"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := tc.serving.ManagerOptions()
			assert.Equal(t, tc.serving.MetricsAddr, opts.Metrics.BindAddress)
			assert.Equal(t, tc.secure, opts.Metrics.SecureServing)
			assert.Equal(t, tc.withFilter, opts.Metrics.FilterProvider != nil)
			assert.Equal(t, tc.serving.ProbeAddr, opts.HealthProbeBindAddress)
			assert.Equal(t, tc.leaderElects, opts.LeaderElection)
			assert.Equal(t, LeaderElectionID, opts.LeaderElectionID)
		})
	}
}

func TestOnlyTheLeaderWaitsForThePolicies(t *testing.T) {
	p := NewPolicies(nil)
	elected := make(chan struct{})
	check := leaderReady(elected, p.Ready)
	assert.NoError(t, check(nil), "a standby is ready: it loads no policy until it leads")

	close(elected)
	require.ErrorIs(t, check(nil), errPoliciesNotLoaded, "the new leader is not ready until it loaded the policies")
	p.serve(nil, nil)
	assert.NoError(t, check(nil))
}
