package process

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// FindBuild returns the folder of a build of real components (make olm, make olmv1): the
// folder env names when it holds every one of names, otherwise the build of the highest
// version under bin/dir (folders named <version>[-<more>]) that does; "" when there is none.
func FindBuild(env, dir string, names ...string) string {
	found, _ := filepath.Glob(repo.Path("bin", dir, "*"))
	slices.SortFunc(found, func(a, b string) int { return semver.Compare(filepath.Base(b), filepath.Base(a)) })
	for _, d := range append([]string{os.Getenv(env)}, found...) {
		if d != "" && holds(d, names) {
			return d
		}
	}
	return ""
}

func holds(dir string, names []string) bool {
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// RequireBuild skips t when build is "" (not built), except in CI, where it fails; why says
// how to build it.
func RequireBuild(t *testing.T, build string, why error) {
	t.Helper()
	if build != "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}
