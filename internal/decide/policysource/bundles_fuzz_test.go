package policysource

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// fuzzMaxBytes is the bundle limit under fuzzing: small, so that the size checks are reached.
const fuzzMaxBytes = 64 << 10

// FuzzReadTarball feeds arbitrary bytes to the bundle tarball reader (readTarball, what
// LoadBundles does with a .tar.gz file or a bundle server's answer). An input that is not
// gzipped is taken as the tar stream and gzipped first, so the fuzzer mutates the tar
// headers and files rather than breaking the gzip checksum; a gzipped input is read as it
// is. Seeds are tar streams in testdata/fuzz/FuzzReadTarball. Beyond "no panic", a bundle
// read has Rego modules or data, no policy test (*_test.rego), every module parsed, and no more than the
// limit in module sources.
func FuzzReadTarball(f *testing.F) {
	s := &BundleSource{opts: BundleOptions{MaxBytes: fuzzMaxBytes, Once: true, Log: logr.Discard()}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			var buf bytes.Buffer
			gz := gzip.NewWriter(&buf)
			_, _ = gz.Write(data)
			_ = gz.Close()
			data = buf.Bytes()
		}
		b, err := s.readTarball(data, "fuzz.tar.gz")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if b == nil {
			t.Fatal("no bundle and no error")
		}
		if len(b.Modules) == 0 && len(b.Data) == 0 {
			t.Fatal("a bundle with neither modules nor data")
		}
		var total int
		for _, m := range b.Modules {
			p := bundleModulePath(m)
			if strings.HasSuffix(p, "_test.rego") {
				t.Fatalf("policy test %s kept", p)
			}
			if m.Parsed == nil {
				t.Fatalf("module %s not parsed", p)
			}
			total += len(m.Raw)
		}
		if total > fuzzMaxBytes {
			t.Fatalf("%d bytes of modules, more than the limit of %d", total, fuzzMaxBytes)
		}
		_ = bundleHash(b)
	})
}
