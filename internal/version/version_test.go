package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGet(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d"}, {Key: "vcs.modified", Value: "true"}}
	for name, tc := range map[string]struct {
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		"a linked-in version wins over the module version": {
			linked: "v0.1.0", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.9"}}, want: "v0.1.0",
		},
		"go install reports the module version": {
			linked: "dev", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, want: "v0.2.0",
		},
		"a local build without ldflags stays dev": {
			linked: "dev", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: "dev",
		},
		"the revision and a dirty tree are shown": {
			linked: "dev", bi: &debug.BuildInfo{Settings: vcs}, want: "dev (1a2b3c4d5e6f, dirty)",
		},
		"no build info leaves the linked-in version": {
			linked: "v0.1.0", want: "v0.1.0",
		},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, get(tc.linked, tc.bi).String())
		})
	}
}
