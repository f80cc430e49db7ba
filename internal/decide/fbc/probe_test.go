package fbc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// errNoProbe says `make olmv1-probe` has not built the probe.
var errNoProbe = errors.New("the OLM v1 probe (operator-controller's own resolver) not found: run `make olmv1-probe`, or set TOLLGATE_OLMV1_BIN to a folder holding probe")

// probeWorld is one question for the probe (hack/tools/olmv1/probe): the catalogs, a
// ClusterExtension's spec.source.catalog and its installed bundle.
type probeWorld struct {
	Catalogs  []probeCatalog `json:"catalogs"`
	Catalog   probeFilter    `json:"catalog"`
	Installed *fbc.Installed `json:"installed"`
}

type probeCatalog struct {
	Name             string `json:"name"`
	Priority         int32  `json:"priority"`
	AvailabilityMode string `json:"availabilityMode,omitempty"`
	Content          string `json:"content"`
}

type probeFilter struct {
	PackageName             string   `json:"packageName"`
	Version                 string   `json:"version,omitempty"`
	Channels                []string `json:"channels,omitempty"`
	UpgradeConstraintPolicy string   `json:"upgradeConstraintPolicy,omitempty"`
}

type probeAnswer struct {
	Bundle  string `json:"bundle"`
	Version string `json:"version"`
	Error   string `json:"error"`
}

// TestAdmitAgreesWithOperatorController: on thousands of random worlds (build metadata,
// pre-releases, the same versions in several catalogs and priorities, deprecations, channels,
// replaces, skips and skipRange, SelfCertified, Unavailable catalogs, malformed and stray
// objects, duplicate names, dependencies), what operator-controller v1.2.0's own resolver
// installs is one of the bundles Admit says it could install, and it fails where Admit says
// nothing can be installed (or that a failure is possible). TOLLGATE_PROBE_WORLDS sets how many
// worlds (default 3,000).
func TestAdmitAgreesWithOperatorController(t *testing.T) {
	dir := process.FindBuild("TOLLGATE_OLMV1_BIN", "olmv1", "probe")
	process.RequireBuild(t, dir, errNoProbe)
	n := 3000
	if s := os.Getenv("TOLLGATE_PROBE_WORLDS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	worlds := make([]probeWorld, n)
	var stdin bytes.Buffer
	for i := range worlds {
		worlds[i] = randomProbeWorld(rand.New(rand.NewPCG(uint64(i), 44)))
		b, err := json.Marshal(worlds[i])
		require.NoError(t, err)
		stdin.Write(append(b, '\n'))
	}
	cmd := exec.Command(filepath.Join(dir, "probe"))
	cmd.Stdin, cmd.Stderr = &stdin, os.Stderr
	stdout, err := cmd.Output()
	require.NoError(t, err)
	answers := bufio.NewScanner(bytes.NewReader(stdout))
	answers.Buffer(nil, 1<<20)
	installs := 0
	for i := range worlds {
		require.True(t, answers.Scan(), "world %d: no answer", i)
		var a probeAnswer
		require.NoError(t, json.Unmarshal(answers.Bytes(), &a))
		if msg := disagreement(worlds[i], a); msg != "" {
			b, _ := json.Marshal(worlds[i])
			t.Fatalf("world %d: %s\nOLM v1: %+v\nworld: %s", i, msg, a, b)
		}
		if a.Error == "" {
			installs++
		}
	}
	t.Logf("%d worlds agree: OLM v1 installs a bundle in %d, refuses in %d", n, installs, n-installs)
	require.Greater(t, installs, n/4, "the worlds must mostly resolve, or they test little")
}

// disagreement says how fbc's answer on w differs from what OLM v1 answered; "" when it does
// not.
func disagreement(w probeWorld, a probeAnswer) string {
	var offers []fbc.Offer
	for _, c := range w.Catalogs {
		if c.AvailabilityMode == "Unavailable" {
			continue
		}
		content, err := fbc.Read(strings.NewReader(c.Content), fbc.DefaultLimits)
		if err != nil {
			return expectFailure(a, "catalog "+c.Name+" unreadable: "+err.Error())
		}
		offers = append(offers, fbc.Offer{Catalog: c.Name, Priority: c.Priority, Package: content.Packages[w.Catalog.PackageName]})
	}
	slices.SortFunc(offers, func(x, y fbc.Offer) int { return strings.Compare(x.Catalog, y.Catalog) })
	adm, err := fbc.Admit(offers, fbc.Query{Version: w.Catalog.Version, Channels: w.Catalog.Channels, Installed: w.Installed,
		SelfCertified: w.Catalog.UpgradeConstraintPolicy == "SelfCertified"})
	switch {
	case err != nil:
		return expectFailure(a, "fbc: "+err.Error())
	case len(adm.Bundles) == 0:
		return expectFailure(a, fmt.Sprintf("fbc admits nothing (ambiguous: %v)", adm.Ambiguous))
	case a.Error != "" && adm.MayFail:
		return ""
	case a.Error != "":
		return fmt.Sprintf("fbc admits %s, OLM v1 fails", admittedNames(adm))
	}
	for _, b := range adm.Bundles {
		if b.Name == a.Bundle && b.Version.String() == a.Version {
			return ""
		}
	}
	return fmt.Sprintf("OLM v1 installs %s %s, which fbc does not admit (it admits %s)", a.Bundle, a.Version, admittedNames(adm))
}

func expectFailure(a probeAnswer, why string) string {
	if a.Error == "" {
		return why + "; but OLM v1 installs " + a.Bundle + " " + a.Version
	}
	return ""
}

func admittedNames(adm fbc.Admission) string {
	var out []string
	for _, b := range adm.Bundles {
		out = append(out, b.Catalog+"/"+b.Name+"@"+b.Version.String())
	}
	return strings.Join(out, ", ")
}

// probeVersions are the versions of a random world: builds and pre-releases among them.
var probeVersions = []string{"1.0.0", "1.0.0+1", "1.0.0+2", "1.1.0-rc.1", "1.1.0", "1.1.0+1", "1.2.0", "1.2.0+b", "1.3.0", "2.0.0"}

// randomProbeWorld is one to three catalogs of package p (sometimes another package beside it),
// and a ClusterExtension of p asking for a random pin, range or nothing, with random channels,
// policy and installed bundle.
func randomProbeWorld(rng *rand.Rand) probeWorld {
	var w probeWorld
	for i := range 1 + rng.IntN(3) {
		c := probeCatalog{Name: fmt.Sprintf("cat%d", i), Priority: int32(rng.IntN(3)) - 1}
		if i > 0 && rng.IntN(8) == 0 {
			c.AvailabilityMode = "Unavailable"
		}
		c.Content = randomProbeContent(rng)
		w.Catalogs = append(w.Catalogs, c)
	}
	w.Catalog = probeFilter{PackageName: "p", UpgradeConstraintPolicy: "CatalogProvided"}
	switch rng.IntN(4) {
	case 0, 1:
		w.Catalog.Version = probeVersions[rng.IntN(len(probeVersions))]
	case 2:
		w.Catalog.Version = []string{">=1.0.0 <1.2.0", ">1.0.0", "<2.0.0", "1.x", ">=1.1.0-0"}[rng.IntN(5)]
	}
	if rng.IntN(3) == 0 {
		w.Catalog.Channels = [][]string{{"stable"}, {"fast"}, {"stable", "fast"}, {"none"}}[rng.IntN(4)]
	}
	if rng.IntN(4) == 0 {
		w.Catalog.UpgradeConstraintPolicy = "SelfCertified"
	}
	if rng.IntN(5) > 0 {
		v := probeVersions[rng.IntN(len(probeVersions))]
		w.Installed = &fbc.Installed{Name: probeName(rng, v), Version: v}
	}
	return w
}

// probeName is the name of a bundle of version v: p.v<v>, or another name for the same version.
func probeName(rng *rand.Rand, v string) string {
	if rng.IntN(5) == 0 {
		return "p-alt.v" + v
	}
	return "p.v" + v
}

// randomProbeContent is one catalog's content: bundles of random versions and names, two
// channels with random edges, deprecations, and now and then an object OLM v1 treats apart.
func randomProbeContent(rng *rand.Rand) string {
	lines := []string{`{"schema":"olm.package","name":"p","defaultChannel":"stable"}`}
	var names []string
	for _, v := range probeVersions {
		if rng.IntN(2) == 0 {
			continue
		}
		name := probeName(rng, v)
		names = append(names, name)
		props := fmt.Sprintf(`{"type":"olm.package","value":{"packageName":"p","version":%q}}`, v)
		if rng.IntN(20) == 0 {
			props += `,{"type":"olm.gvk.required","value":{"group":"x","version":"v1","kind":"X"}}`
		}
		lines = append(lines, fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"p","image":"r/%s","properties":[%s]}`, name, name, props))
	}
	for _, ch := range []string{"stable", "fast"} {
		lines = append(lines, randomProbeChannel(rng, ch, names))
	}
	lines = append(lines, randomProbeDeprecations(rng, names)...)
	lines = append(lines, randomOddities(rng, names)...)
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	return strings.Join(lines, "\n")
}

// randomProbeChannel is channel ch of p with some of names, and random edges between them.
func randomProbeChannel(rng *rand.Rand, ch string, names []string) string {
	var entries []string
	for _, n := range names {
		if rng.IntN(4) == 0 {
			continue
		}
		e := fmt.Sprintf(`{"name":%q`, n)
		if len(names) > 0 && rng.IntN(2) == 0 {
			e += fmt.Sprintf(`,"replaces":%q`, names[rng.IntN(len(names))])
		}
		if len(names) > 0 && rng.IntN(4) == 0 {
			e += fmt.Sprintf(`,"skips":[%q]`, names[rng.IntN(len(names))])
		}
		if rng.IntN(4) == 0 {
			e += fmt.Sprintf(`,"skipRange":%q`, []string{">=1.0.0 <1.2.0", "<1.1.0", ">=1.0.0 <2.0.0", "not a range"}[rng.IntN(4)])
		}
		entries = append(entries, e+"}")
	}
	return fmt.Sprintf(`{"schema":"olm.channel","package":"p","name":%q,"entries":[%s]}`, ch, strings.Join(entries, ","))
}

// randomProbeDeprecations are zero to two olm.deprecations objects of p (named or not).
func randomProbeDeprecations(rng *rand.Rand, names []string) []string {
	var out []string
	for i := range rng.IntN(3) {
		var entries []string
		for _, n := range names {
			if rng.IntN(3) == 0 {
				entries = append(entries, fmt.Sprintf(`{"reference":{"schema":"olm.bundle","name":%q},"message":"old"}`, n))
			}
		}
		name := ""
		if rng.IntN(2) == 0 {
			name = fmt.Sprintf(`"name":"d%d",`, i)
		}
		out = append(out, `{"schema":"olm.deprecations",`+name+`"package":"p","entries":[`+strings.Join(entries, ",")+`]}`)
	}
	return out
}

// randomOddities are, now and then: a duplicate bundle name with another version, a stray
// object without a package, a malformed object of another package, one of p.
func randomOddities(rng *rand.Rand, names []string) []string {
	var out []string
	if len(names) > 0 && rng.IntN(8) == 0 {
		v := probeVersions[rng.IntN(len(probeVersions))]
		out = append(out, fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"p","image":"dup","properties":[{"type":"olm.package","value":{"packageName":"p","version":%q}}]}`, names[rng.IntN(len(names))], v))
	}
	if rng.IntN(10) == 0 {
		out = append(out, `{"schema":"olm.bundle","name":"stray"}`)
	}
	if rng.IntN(10) == 0 {
		out = append(out, `{"schema":"olm.channel","package":"other","name":"x","entries":"not a list"}`)
	}
	if rng.IntN(25) == 0 {
		out = append(out, `{"schema":"olm.channel","package":"p","name":"broken","entries":"not a list"}`)
	}
	if rng.IntN(50) == 0 {
		out = append(out, `{"schema":"olm.bundle","name":7,"package":"p"}`)
	}
	return out
}
