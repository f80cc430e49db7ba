package badpolicies

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// outcome is what a bad policy must come to.
type outcome int

const (
	// rejected: it does not load; the ConfigMap's status annotation, a Warning Event, the
	// metric and the log report the error, and the ConfigMap's last good version stays.
	rejected outcome = iota
	// failsClosed: it loads, but every decision it makes is a standing PolicyError denial.
	failsClosed
	// holds: it loads and changes nothing that matters: the site's hold still stands.
	holds
)

// badCase is one case of the corpus: a file (one ConfigMap key, named after the file) or a
// folder (one key per file). Keys ending in .rego go to the Rego ConfigMap, the others (YAML
// or JSON) to the data ConfigMap.
type badCase struct {
	name    string
	rego    map[string]string
	data    map[string]string
	outcome outcome
	// expect is what the error must say: in the ConfigMap's status for rejected, in the
	// PolicyError denial for failsClosed; the code that must still deny for holds.
	expect string
	// anyFile: the error may be located in an embedded file the case's module broke.
	anyFile bool
}

// Header lines every case carries in one of its files (`# expect: ...` and so on).
const (
	headerRejected    = "# expect: "
	headerFailsClosed = "# expect-gate: "
	headerHolds       = "# expect-hold: "
	headerFile        = "# file: any"
)

// loadCorpus reads the cases under dir, in name order.
func loadCorpus(dir string) ([]badCase, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cases []badCase
	for _, e := range entries {
		c := badCase{name: strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), rego: map[string]string{}, data: map[string]string{}, outcome: -1}
		files := []string{filepath.Join(dir, e.Name())}
		if e.IsDir() {
			c.name = e.Name()
			inner, err := os.ReadDir(files[0])
			if err != nil {
				return nil, err
			}
			files = nil
			for _, f := range inner {
				files = append(files, filepath.Join(dir, e.Name(), f.Name()))
			}
		}
		for _, f := range files {
			if err := c.add(f); err != nil {
				return nil, err
			}
		}
		if c.outcome < 0 {
			return nil, fmt.Errorf("%s: no %q, %q or %q header", e.Name(), headerRejected, headerFailsClosed, headerHolds)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// add makes file one of the case's keys and reads its header.
func (c *badCase) add(file string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	key := filepath.Base(file)
	switch filepath.Ext(key) {
	case ".yaml", ".json":
		c.data[key] = string(src)
	default: // .rego, and a key that should have been one
		c.rego[key] = string(src)
	}
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break // the header is the leading comment
		}
		for prefix, o := range map[string]outcome{headerRejected: rejected, headerFailsClosed: failsClosed, headerHolds: holds} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				if c.outcome >= 0 {
					return fmt.Errorf("%s: a second expectation", file)
				}
				c.outcome, c.expect = o, strings.TrimSpace(rest)
			}
		}
		if line == headerFile {
			c.anyFile = true
		}
	}
	return sc.Err()
}

// keys are the case's ConfigMap keys, sorted.
func (c badCase) keys() []string {
	var keys []string
	for k := range c.rego {
		keys = append(keys, k)
	}
	for k := range c.data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
