package upstream

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// build builds pkgs of the tool module hack/tools/<module> into a temporary folder and
// returns it.
func build(t *testing.T, module string, pkgs ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the tools are built with go: %v", err)
	}
	dir := t.TempDir()
	start := time.Now()
	cmd := exec.Command(goBin, append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = repo.Path("hack", "tools", module)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "build hack/tools/%s: %s", module, out)
	t.Logf("built hack/tools/%s in %s", module, time.Since(start).Round(time.Second))
	return dir
}

// run runs a tool from the repository's root and returns its output; it must succeed.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repo.Root()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out)
	t.Logf("%s:\n%s", filepath.Base(name), out)
	return string(out)
}

func TestPrometheusParsesTheAlertsAndTheDashboard(t *testing.T) {
	bin := build(t, "prometheus", ".")
	out := run(t, nil, filepath.Join(bin, "prometheus"),
		"-rules", filepath.Join("config", "prometheus", "prometheus_rule.yaml"),
		"-dashboard", filepath.Join("config", "grafana", "tollgate-dashboard.json"))
	require.Contains(t, out, "rules")
}

func TestOperatorFrameworkValidatesTheBundle(t *testing.T) {
	bin := build(t, "olm", "./validatebundle")
	// The version the test control plane runs: an API the bundle uses that it removed is an
	// error, not a warning.
	out := run(t, nil, filepath.Join(bin, "validatebundle"), "-k8s-version", "1.34", filepath.Join("bundles", "olm"))
	require.Contains(t, out, "passes")
}

// krew-index's CI runs validate-krew-manifest on a plugin's manifest: the manifest's structure,
// its platform selectors, and for every platform `kubectl krew install --manifest`, which
// downloads the archive, checks its sha256, installs the binary and finds a LICENSE. Here
// hack/release writes the manifest for archives served by a local server (with stand-in
// binaries: krew never runs them), so nothing is downloaded from the internet.
func TestKrewValidatesAndInstallsTheReleaseManifest(t *testing.T) {
	kubectl := controlplane.Kubectl()
	if kubectl == "" {
		t.Skip("kubectl is built with the control plane: run `make controlplane`")
	}
	bin := build(t, "krew", "sigs.k8s.io/krew/cmd/krew", "sigs.k8s.io/krew/cmd/validate-krew-manifest")
	require.NoError(t, os.Rename(filepath.Join(bin, "krew"), filepath.Join(bin, "kubectl-krew")))
	require.NoError(t, os.Symlink(kubectl, filepath.Join(bin, "kubectl")))

	release := t.TempDir()
	const version = "v0.0.0-upstream"
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		require.NoError(t, os.MkdirAll(filepath.Join(release, p), 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(release, p, "kubectl-tollgate"), []byte("#!/bin/sh\n"), 0o600))
	}
	mux := http.NewServeMux()
	mux.Handle("/releases/download/"+version+"/", http.StripPrefix("/releases/download/"+version+"/", http.FileServer(http.Dir(release))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	run(t, nil, goBin, "run", "./hack/release", "-dir", release, "-version", version, "-repo", srv.URL)

	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	out := run(t, []string{"PATH=" + path, "HOME=" + t.TempDir()}, filepath.Join(bin, "validate-krew-manifest"), "-manifest", filepath.Join(release, "tollgate.yaml"))
	require.Contains(t, out, "structural validation OK")
	require.Contains(t, out, "all 4 spec.platforms installed fine")
}
