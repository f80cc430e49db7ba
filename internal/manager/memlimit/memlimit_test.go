package memlimit

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheGoMemoryLimitFollowsTheContainers(t *testing.T) {
	write := func(t *testing.T, file, content string) string {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, file)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, file), []byte(content), 0o644))
		return root
	}
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	tests := []struct {
		name, file, content string
		want                int64
	}{
		{"cgroup v2 limit", "memory.max", "268435456\n", 241591910},
		{"cgroup v2 without a limit", "memory.max", "max\n", 0},
		{"cgroup v1 limit", "memory/memory.limit_in_bytes", "536870912\n", 483183820},
		{"cgroup v1 without a limit", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0},
		{"unreadable", "memory.max", "garbage", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetenv(t, "GOMEMLIMIT")
			debug.SetMemoryLimit(before)
			assert.Equal(t, tt.want, Set(write(t, tt.file, tt.content)))
			if tt.want > 0 {
				assert.Equal(t, tt.want, debug.SetMemoryLimit(-1), "the runtime's limit")
			}
		})
	}
	t.Run("GOMEMLIMIT wins", func(t *testing.T) {
		t.Setenv("GOMEMLIMIT", "100MiB")
		assert.Zero(t, Set(write(t, "memory.max", "268435456\n")))
	})
	unsetenv(t, "GOMEMLIMIT")
	assert.Zero(t, Set(t.TempDir()), "no cgroup file system")
}

// unsetenv unsets key for the test; t.Setenv restores it after.
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "")
	require.NoError(t, os.Unsetenv(key))
}
