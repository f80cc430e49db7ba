// Package repo finds files of the Tollgate source tree from a test, wherever the test's package
// lives: repo.Path("test", "testdata", "snapshots") instead of a chain of "..".
package repo

import (
	"path/filepath"
	"runtime"
)

// Root is the root of the Tollgate source tree (the folder holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Path joins elem to the root of the source tree.
func Path(elem ...string) string {
	return filepath.Join(append([]string{Root()}, elem...)...)
}
