package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// sutUser is the user olmsim's audit log names the system under test's requests by.
const sutUser = "olmsim-sut"

// writeVerbs are the verbs of the requests that write.
var writeVerbs = []string{"create", "update", "patch", "delete"}

// auditEntry is what tenantWrites reads of one line of the API server's audit log.
type auditEntry struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"objectRef"`
	Received time.Time `json:"requestReceivedTimestamp"`
}

// tenants are the system under test's writes in a phase, per tenant (namespace): the tenants
// with an approval in the phase and the others (held), and the writes of each kind per tenant.
type tenants struct {
	Approved, Held             int
	ApprovedWrites, HeldWrites float64
}

// tenantWrites reads an audit log and counts the system under test's writes received in
// [from, to) by namespace; a namespace whose InstallPlan it patched in that window is an
// approved tenant, any other namespace it wrote in a held one.
func tenantWrites(path string, from, to time.Time) (tenants, error) {
	f, err := os.Open(path) //nolint:gosec // the run's own audit log
	if err != nil {
		return tenants{}, err
	}
	defer func() { _ = f.Close() }()
	writes, approved := map[string]int{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for line := 1; sc.Scan(); line++ {
		var e auditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return tenants{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if e.Stage != "ResponseComplete" || e.User.Username != sutUser || e.ObjectRef.Namespace == "" ||
			!slices.Contains(writeVerbs, e.Verb) ||
			e.Received.Before(from) || !e.Received.Before(to) {
			continue
		}
		writes[e.ObjectRef.Namespace]++
		if e.Verb == "patch" && e.ObjectRef.Resource == "installplans" {
			approved[e.ObjectRef.Namespace] = true
		}
	}
	if err := sc.Err(); err != nil {
		return tenants{}, fmt.Errorf("%s: %w", path, err)
	}
	var t tenants
	var approvedWrites, heldWrites int
	for ns, n := range writes {
		if approved[ns] {
			t.Approved++
			approvedWrites += n
		} else {
			t.Held++
			heldWrites += n
		}
	}
	if t.Approved > 0 {
		t.ApprovedWrites = float64(approvedWrites) / float64(t.Approved)
	}
	if t.Held > 0 {
		t.HeldWrites = float64(heldWrites) / float64(t.Held)
	}
	return t, nil
}

// phaseWindow is when the phase name ran: the phases follow each other from start.
func phaseWindow(start time.Time, phases []phaseWrites, name string) (from, to time.Time, ok bool) {
	from = start
	for _, p := range phases {
		to = from.Add(time.Duration(p.Seconds * float64(time.Second)))
		if p.Phase == name {
			return from, to, true
		}
		from = to
	}
	return time.Time{}, time.Time{}, false
}
