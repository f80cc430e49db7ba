// Package memlimit gives the Go runtime a soft memory limit from the container's memory limit
// (cgroup v2 or v1), so the collector works harder as the heap nears the limit instead of the
// container being killed at it.
package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Share is the part of the container's memory limit the Go runtime aims to stay under:
// the rest is for what it does not count (the binary's mapped pages, buffers of the kernel).
const Share = 0.9

// Set gives the Go runtime a soft memory limit of Share of the container's
// memory limit, read from the cgroup file system under root, so the collector works harder
// as the heap nears the limit instead of the container being killed at it. GOMEMLIMIT, when
// set, wins, as does no limit at all. It returns the limit set, 0 when none.
func Set(root string) int64 {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return 0
	}
	limit := cgroupMemoryLimit(root)
	if limit <= 0 {
		return 0
	}
	soft := int64(float64(limit) * Share)
	debug.SetMemoryLimit(soft)
	return soft
}

// cgroupMemoryLimit is the memory limit of the cgroup mounted at root (v2 memory.max, or v1
// memory/memory.limit_in_bytes), or 0 when there is none or it cannot be read. cgroup v1 writes
// a huge number for "no limit".
func cgroupMemoryLimit(root string) int64 {
	for _, file := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || v <= 0 || v >= math.MaxInt64/2 {
			return 0 // "max", or v1's "unlimited"
		}
		return v
	}
	return 0
}
