package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTenantWritesSplitsApprovedFromHeldTenantsInThePhase(t *testing.T) {
	entry := func(stage, user, verb, resource, ns, at string) string {
		return `{"stage":"` + stage + `","verb":"` + verb + `","user":{"username":"` + user + `"},` +
			`"objectRef":{"resource":"` + resource + `","namespace":"` + ns + `"},"requestReceivedTimestamp":"` + at + `"}`
	}
	const in, before, after = "2026-11-28T20:00:05Z", "2026-11-28T20:00:00Z", "2026-11-28T20:00:10Z"
	log := strings.Join([]string{
		entry("RequestReceived", sutUser, "patch", "installplans", "a", in),
		entry("ResponseComplete", sutUser, "patch", "installplans", "a", in),
		entry("ResponseComplete", sutUser, "update", "upgradegates", "a", in),
		entry("ResponseComplete", sutUser, "update", "upgradegates", "b", in),
		entry("ResponseComplete", sutUser, "create", "events", "b", in),
		entry("ResponseComplete", sutUser, "get", "upgradegates", "b", in),
		entry("ResponseComplete", sutUser, "update", "upgradegates", "c", before),
		entry("ResponseComplete", sutUser, "patch", "installplans", "b", after),
		entry("ResponseComplete", "admin", "create", "events", "d", in),
		entry("ResponseComplete", sutUser, "create", "upgradegates", "", in),
	}, "\n")
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, []byte(log+"\n"), 0o600))
	from, _ := time.Parse(time.RFC3339, "2026-11-28T20:00:01Z")
	got, err := tenantWrites(path, from, from.Add(5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, tenants{Approved: 1, Held: 1, ApprovedWrites: 2, HeldWrites: 2}, got,
		"writes only, of the system under test, in the window; b's approval came after it")

	require.NoError(t, os.WriteFile(path, []byte(log+"\nnot json\n"), 0o600))
	_, err = tenantWrites(path, from, from.Add(5*time.Second))
	assert.ErrorContains(t, err, "audit.log:11")
}

func TestPhaseWindowFollowsThePhases(t *testing.T) {
	start := time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC)
	phases := []phaseWrites{{Phase: "startup", Seconds: 30}, {Phase: "plans", Seconds: 20.5}}
	from, to, ok := phaseWindow(start, phases, "plans")
	require.True(t, ok)
	assert.Equal(t, start.Add(30*time.Second), from)
	assert.Equal(t, start.Add(50500*time.Millisecond), to)
	_, _, ok = phaseWindow(start, phases, "flip")
	assert.False(t, ok)
}
