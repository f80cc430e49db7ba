package pin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// errNoProbe says `make olmv1-probe` has not built the probe.
var errNoProbe = errors.New("the OLM v1 probe (operator-controller's own resolver) not found: run `make olmv1-probe`, or set TOLLGATE_OLMV1_BIN to a folder holding probe")

// TestDecideAgreesWithOperatorController: the invariant asked of OLM v1 itself. For the pin
// Decide returns on each of 2,000 random worlds, what operator-controller v1.2.0's own resolver
// (the probe, hack/tools/olmv1/probe) installs is the installed bundle, or a bundle that was
// judged and allowed, or, at the installed version, one reported unexcludable.
func TestDecideAgreesWithOperatorController(t *testing.T) {
	dir := process.FindBuild("TOLLGATE_OLMV1_BIN", "olmv1", "probe")
	process.RequireBuild(t, dir, errNoProbe)
	type world struct {
		f   pin.Facts
		ev  *recorder
		out pin.Outcome
	}
	var worlds []world
	var stdin bytes.Buffer
	for seed := range uint64(2000) {
		f, allow, raw := randomWorld(rand.New(rand.NewPCG(seed, 11)))
		ev := &recorder{allow: allow, seen: map[string]bool{}}
		out := pin.Decide(context.Background(), f, ev)
		worlds = append(worlds, world{f, ev, out})
		b, err := json.Marshal(probeQuestion(f, raw, out.Target))
		require.NoError(t, err)
		stdin.Write(append(b, '\n'))
	}
	cmd := exec.Command(filepath.Join(dir, "probe"))
	cmd.Stdin, cmd.Stderr = &stdin, os.Stderr
	stdout, err := cmd.Output()
	require.NoError(t, err)
	answers := bufio.NewScanner(bytes.NewReader(stdout))
	moved := 0
	for i, w := range worlds {
		require.True(t, answers.Scan(), "world %d: no answer", i)
		var a struct{ Bundle, Version, Error string }
		require.NoError(t, json.Unmarshal(answers.Bytes(), &a))
		if a.Error == "" {
			require.True(t, admitted(w.out, w.f, a.Bundle, a.Version), "seed %d: at pin %s OLM v1 installs %s %s, which was neither judged and allowed nor reported", i, w.out.Target, a.Bundle, a.Version)
		}
		if w.out.Target != w.out.Installed {
			moved++
		}
	}
	t.Logf("%d worlds agree with OLM v1; the pin moved in %d", len(worlds), moved)
}

// probeQuestion asks what OLM v1 installs for the extension of f pinned at target.
func probeQuestion(f pin.Facts, raw map[string]string, target string) map[string]any {
	var catalogs []map[string]any
	for _, c := range f.Catalogs {
		catalogs = append(catalogs, map[string]any{"name": c.Name, "priority": c.Spec.Priority, "availabilityMode": c.Spec.AvailabilityMode, "content": raw[c.Name]})
	}
	src := f.Extension.Extension.Spec.Source.Catalog
	policy := src.UpgradeConstraintPolicy
	if policy == "" {
		policy = olmv1.UpgradeConstraintPolicyCatalogProvided
	}
	return map[string]any{
		"catalogs":  catalogs,
		"catalog":   map[string]any{"packageName": src.PackageName, "version": target, "channels": src.Channels, "upgradeConstraintPolicy": policy},
		"installed": f.Extension.Extension.Status.Install.Bundle,
	}
}

// admitted says whether bundle name@version, which OLM v1 installs at the outcome's pin, is
// the installed bundle, or one judged and allowed for that pin, or one reported unexcludable.
func admitted(out pin.Outcome, f pin.Facts, name, version string) bool {
	in := f.Extension.Extension.Status.Install.Bundle
	if name == in.Name && version == in.Version {
		return true
	}
	is := func(j pin.Judged) bool { return j.Candidate.Bundle.Name == name && j.Candidate.Version == version }
	if slices.ContainsFunc(out.Unexcludable, is) {
		return true
	}
	judged := out.Kept.Bundles
	if out.Target != out.Installed {
		judged = out.Versions[len(out.Versions)-1].Bundles
	}
	i := slices.IndexFunc(judged, is)
	return i >= 0 && judged[i].Result.Decision.Allowed
}
