package policysource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/tollgate-dev/tollgate/internal/text"
)

// DefaultBundlePollInterval is how often a bundle is re-read when BundleOptions.PollInterval
// is zero.
const DefaultBundlePollInterval = 60 * time.Second

// DefaultBundleMaxBytes caps a bundle (a tarball or an HTTP response as received, and the
// files of a bundle uncompressed, each and all together) when BundleOptions.MaxBytes is zero.
const DefaultBundleMaxBytes = 64 << 20

// maxErrorBody caps what an error keeps of a bundle server's answer to a failed request.
const maxErrorBody = 512

// BundleOptions configure LoadBundles.
type BundleOptions struct {
	// PollInterval is how often every bundle is read again: a bundle server is asked with
	// If-None-Match, a directory or tarball is re-read and compared. Zero means
	// DefaultBundlePollInterval. After a failed read the next try comes sooner (1s, doubling up
	// to PollInterval).
	PollInterval time.Duration
	// Once loads the bundles and starts no pollers (one-shot commands such as tollgate eval).
	Once bool
	// Client fetches from bundle servers; nil means a client with a 30s timeout.
	Client *http.Client
	// MaxBytes caps a tarball or HTTP response as received, and the files of a bundle
	// uncompressed, each and all together (a small gzip file can expand a thousandfold); zero
	// means DefaultBundleMaxBytes.
	MaxBytes int64
	// Log receives the pollers' reports; the zero value means ctrl.Log.WithName("bundles").
	Log logr.Logger
	// AllowInsecureHTTP allows bundle servers over plain http: http:// locations and redirects
	// to http. Off, they are refused: a bundle fetched in clear text can be changed on the way.
	AllowInsecureHTTP bool
	// VerificationKey, when set, verifies every bundle's signature (.signatures.json, as `opa
	// build --signing-key` or `opa sign` write it), and an unsigned bundle is refused. It is a
	// PEM public key or certificate, or an HMAC secret, or a file holding one (as OPA's
	// --verification-key). Without it, a signed bundle is refused: it could not be verified.
	VerificationKey string
	// VerificationKeyID is the key's id, as the signatures name it; empty means "default".
	VerificationKeyID string
	// SigningAlgorithm is the signatures' algorithm; empty means RS256.
	SigningAlgorithm string
}

// BundleSource holds the OPA bundles given to `tollgate run --bundle`, in the order given, and
// keeps them current. Each location is one bundle:
//
//   - a directory: an OPA bundle directory (.manifest, *.rego, data.json or data.yaml, any depth);
//   - a file: a gzipped tar bundle, as `opa build` writes it;
//   - an http(s) URL: a bundle server, polled as OPA's bundle service protocol defines (GET with
//     If-None-Match; 200 brings a new bundle and ETag, 304 means unchanged).
//
// Modules are Rego v1. Files ending in _test.rego are left out (packs ship their tests beside
// their policies). Signed bundles (.signatures.json) are verified with
// BundleOptions.VerificationKey, which then makes signatures required; without a key a signed
// bundle is refused. Bundle servers are reached over https only, unless
// BundleOptions.AllowInsecureHTTP. Two bundles may not have overlapping manifest roots (OPA's rule for
// several bundles) nor modules with the same path, which would silently replace one another.
//
// Every location must load at start: a missing path, a directory that is no bundle, a bad
// tarball or an unreachable bundle server is an error, so the manager fails closed rather than
// run without the admin's policy. Later, a read that fails keeps the last good bundle in
// service; it is logged, sets tollgate_policy_source_failing{source="bundle/<location>"} and is
// retried. A bundle that reads well but does not compile with the rest is the policy
// reconciler's business: it keeps the last good policy set (controllers.PolicyReconciler).
type BundleSource struct {
	opts BundleOptions
	locs []*bundleLocation

	verify *bundle.VerificationConfig // nil: no key, signed bundles are refused

	mu      sync.RWMutex
	current []*bundle.Bundle

	changed chan event.GenericEvent
}

// bundleLocation is one --bundle value and what was last accepted from it. Only its poller
// touches etag and hash once LoadBundles has returned.
type bundleLocation struct {
	raw  string // as given
	name string // for logs and metrics: an URL without user info or query
	url  *url.URL
	etag string
	hash string
}

// LoadBundles reads every location and, unless opts.Once, polls them until ctx ends.
func LoadBundles(ctx context.Context, locations []string, opts BundleOptions) (*BundleSource, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultBundlePollInterval
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultBundleMaxBytes
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.Log.GetSink() == nil {
		opts.Log = ctrl.Log.WithName("bundles")
	}
	opts.Client = refuseInsecureRedirects(opts.Client, opts.AllowInsecureHTTP)
	verify, err := opts.verification()
	if err != nil {
		return nil, err
	}
	s := &BundleSource{opts: opts, changed: make(chan event.GenericEvent, 1), verify: verify}
	for _, raw := range locations {
		loc := &bundleLocation{raw: raw, name: raw}
		if strings.HasPrefix(raw, "http://") || strings.HasPrefix(raw, "https://") {
			u, err := url.Parse(raw)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("bundle %s: not a valid URL", raw)
			}
			if err := checkScheme(u, opts.AllowInsecureHTTP); err != nil {
				return nil, fmt.Errorf("bundle %s: %w", raw, err)
			}
			loc.url = u
			clean := *u
			clean.User, clean.RawQuery, clean.Fragment = nil, "", ""
			loc.name = clean.String()
		}
		s.locs = append(s.locs, loc)
	}
	s.current = make([]*bundle.Bundle, len(s.locs))
	for i, loc := range s.locs {
		b, etag, hash, err := s.read(ctx, loc)
		if err == nil && b == nil {
			err = errors.New("the server answered 304 Not Modified to a first request")
		}
		if err == nil {
			err = s.compatible(i, b)
		}
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", loc.name, err)
		}
		loc.etag, loc.hash = etag, hash
		s.current[i] = b
		SourceFailing.WithLabelValues("bundle/" + loc.name).Set(0)
		opts.Log.Info("bundle loaded", "bundle", loc.name, "revision", b.Manifest.Revision, "modules", len(b.Modules))
	}
	if !opts.Once {
		for i := range s.locs {
			go s.poll(ctx, i)
		}
	}
	return s, nil
}

// Bundles returns the bundles in service, in the order of the locations. The slice is the
// caller's; the bundles are shared and must not be modified.
func (s *BundleSource) Bundles() []*bundle.Bundle {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*bundle.Bundle(nil), s.current...)
}

// Changed receives an event after a bundle changed. Changes that come while an event is
// pending are folded into it.
func (s *BundleSource) Changed() <-chan event.GenericEvent { return s.changed }

// poll re-reads location i until ctx ends.
func (s *BundleSource) poll(ctx context.Context, i int) {
	failures := 0
	t := time.NewTimer(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		delay := s.opts.PollInterval
		if err := s.refresh(ctx, i); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			if backoff := time.Second << min(failures-1, 16); backoff < delay {
				delay = backoff
			}
		} else {
			failures = 0
		}
		t.Reset(delay)
	}
}

// refresh reads location i once and puts a changed bundle in service. On error the last good
// bundle stays.
func (s *BundleSource) refresh(ctx context.Context, i int) error {
	loc := s.locs[i]
	b, etag, hash, err := s.read(ctx, loc)
	if err == nil && b != nil && hash != loc.hash {
		err = s.compatible(i, b)
	}
	if err != nil {
		SourceFailing.WithLabelValues("bundle/" + loc.name).Set(1)
		s.opts.Log.Error(err, "bundle not updated; the last good bundle stays in service", "bundle", loc.name)
		return err
	}
	SourceFailing.WithLabelValues("bundle/" + loc.name).Set(0)
	if b == nil { // 304 Not Modified
		return nil
	}
	loc.etag = etag
	if hash == loc.hash {
		return nil
	}
	loc.hash = hash
	s.mu.Lock()
	s.current[i] = b
	s.mu.Unlock()
	s.opts.Log.Info("bundle changed", "bundle", loc.name, "revision", b.Manifest.Revision, "modules", len(b.Modules))
	select {
	case s.changed <- event.GenericEvent{}:
	default: // one is pending
	}
	return nil
}

// read loads a location. It returns a nil bundle when a bundle server says 304 Not Modified.
func (s *BundleSource) read(ctx context.Context, loc *bundleLocation) (b *bundle.Bundle, etag, hash string, err error) {
	if loc.url != nil {
		return s.fetch(ctx, loc)
	}
	info, err := os.Stat(loc.raw)
	switch {
	case err != nil:
		return nil, "", "", err
	case info.IsDir():
		if err := checkDirectorySize(loc.raw, s.opts.MaxBytes); err != nil {
			return nil, "", "", err
		}
		b, err = s.readBundle(bundle.NewDirectoryLoader(loc.raw).WithSizeLimitBytes(s.opts.MaxBytes))
		if err != nil && strings.Contains(err.Error(), "multiple manifest files") {
			err = fmt.Errorf("%w (a bundle directory holds one bundle: give each bundle, e.g. each policy pack, its own --bundle)", err)
		}
	case info.Mode().IsRegular():
		var data []byte
		if info.Size() > s.opts.MaxBytes {
			return nil, "", "", fmt.Errorf("%d bytes, more than the limit of %d", info.Size(), s.opts.MaxBytes)
		}
		if data, err = os.ReadFile(loc.raw); err != nil {
			return nil, "", "", err
		}
		b, err = s.readTarball(data, loc.raw)
	default:
		return nil, "", "", errors.New("neither a bundle directory nor a bundle tarball (.tar.gz)")
	}
	if err != nil {
		return nil, "", "", err
	}
	return b, "", bundleHash(b), nil
}

// fetch asks a bundle server for the bundle, with the ETag of the last one accepted.
func (s *BundleSource) fetch(ctx context.Context, loc *bundleLocation) (*bundle.Bundle, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.url.String(), nil)
	if err != nil {
		return nil, "", "", err
	}
	if loc.etag != "" {
		req.Header.Set("If-None-Match", loc.etag)
	}
	// The body is the gzipped tarball itself; a transparently decompressed one would not read.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "tollgate")
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return nil, "", "", err
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return nil, loc.etag, loc.hash, nil
	case http.StatusOK:
	default:
		return nil, "", "", fmt.Errorf("GET %s: %s: %s", loc.name, text.Escape(resp.Status), errorBody(resp.Body))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxBytes+1))
	if err != nil {
		return nil, "", "", fmt.Errorf("GET %s: %w", loc.name, err)
	}
	if int64(len(body)) > s.opts.MaxBytes {
		return nil, "", "", fmt.Errorf("GET %s: the bundle is larger than the limit of %d bytes", loc.name, s.opts.MaxBytes)
	}
	b, err := s.readTarball(body, loc.name)
	if err != nil {
		return nil, "", "", err
	}
	return b, resp.Header.Get("ETag"), bundleHash(b), nil
}

func (s *BundleSource) readTarball(data []byte, baseURL string) (*bundle.Bundle, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return nil, errors.New("not a gzipped tar bundle (.tar.gz, as `opa build` writes it)")
	}
	// OPA's loader reads every file into memory before it returns the first one: check the
	// total first.
	if err := checkTarballSize(data, s.opts.MaxBytes); err != nil {
		return nil, err
	}
	b, err := s.readBundle(bundle.NewTarballLoaderWithBaseURL(bytes.NewReader(data), baseURL).WithSizeLimitBytes(s.opts.MaxBytes))
	if err != nil {
		return nil, fmt.Errorf("read bundle tarball: %w", err)
	}
	return b, nil
}

// readBundle reads one bundle, leaving out policy tests, and insists it holds something. A
// signed bundle is verified (s.verify); then every file is read, so that each can be checked
// against the signatures, and the tests are left out afterwards.
func (s *BundleSource) readBundle(loader bundle.DirectoryLoader) (*bundle.Bundle, error) {
	if s.verify == nil {
		loader = loader.WithFilter(func(abspath string, info fs.FileInfo, _ int) bool {
			return !info.IsDir() && strings.HasSuffix(abspath, "_test.rego")
		})
	}
	b, err := bundle.NewCustomReader(loader).
		WithRegoVersion(ast.RegoV1).
		WithProcessAnnotations(true).
		WithSizeLimitBytes(s.opts.MaxBytes).
		WithBundleVerificationConfig(s.verify).
		Read()
	if err != nil {
		return nil, signatureHint(err, s.verify != nil)
	}
	b.Modules = withoutTests(b.Modules)
	if len(b.Modules) == 0 && len(b.Data) == 0 {
		return nil, errors.New("no Rego modules (other than tests) and no data: not an OPA bundle")
	}
	return &b, nil
}

// compatible checks b, the new bundle of location i, against the others: no overlapping roots
// and no module path in two bundles.
func (s *BundleSource) compatible(i int, b *bundle.Bundle) error {
	others := s.Bundles()
	for j, o := range others {
		if j == i || o == nil {
			continue
		}
		for _, r := range *b.Manifest.Roots {
			for _, or := range *o.Manifest.Roots {
				if bundle.RootPathsOverlap(r, or) {
					return fmt.Errorf("manifest root %q overlaps root %q of bundle %s; bundles need disjoint roots", r, or, s.locs[j].name)
				}
			}
		}
		paths := map[string]bool{}
		for _, m := range o.Modules {
			paths[bundleModulePath(m)] = true
		}
		for _, m := range b.Modules {
			if p := bundleModulePath(m); paths[p] {
				return fmt.Errorf("module %s is also in bundle %s", p, s.locs[j].name)
			}
		}
	}
	return nil
}

// bundleModulePath is the path the engine gives a bundle's module.
func bundleModulePath(m bundle.ModuleFile) string {
	p := m.Path
	if m.RelativePath != "" {
		p = m.RelativePath
	}
	return path.Clean(strings.TrimPrefix(p, "/"))
}

// bundleHash identifies a bundle's content: manifest, module paths and sources, data.
func bundleHash(b *bundle.Bundle) string {
	h := sha256.New()
	mods := append([]bundle.ModuleFile(nil), b.Modules...)
	sort.Slice(mods, func(i, j int) bool { return bundleModulePath(mods[i]) < bundleModulePath(mods[j]) })
	for _, m := range mods {
		p := bundleModulePath(m)
		fmt.Fprintf(h, "%d:%s\x00%d:", len(p), p, len(m.Raw))
		h.Write(m.Raw)
	}
	manifest, _ := json.Marshal(b.Manifest)
	data, _ := json.Marshal(b.Data)
	fmt.Fprintf(h, "%d:%s\x00", len(manifest), manifest)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// ErrBundleTooLarge says a bundle's files add up to more than BundleOptions.MaxBytes.
var ErrBundleTooLarge = errors.New("bundle too large")

// checkTarballSize fails when the files of a gzipped tarball add up to more than max bytes
// uncompressed (their tar headers included), without decompressing more than that: each
// file's declared size is checked before its content is read. A tarball that does not read
// is left to OPA's loader, which says what is wrong with it.
func checkTarballSize(data []byte, max int64) error {
	if at, over := tarballOver(data, max); over {
		return fmt.Errorf("%w: its files add up to more than %d bytes uncompressed (at %s), the limit for a whole bundle",
			ErrBundleTooLarge, max, text.Escape(at))
	}
	return nil
}

// tarballOver names the file of a gzipped tarball at which its size passes max, if it does.
func tarballOver(data []byte, max int64) (string, bool) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", false
	}
	counted := &countingReader{r: gz}
	tr := tar.NewReader(counted)
	for {
		hdr, err := tr.Next()
		if err != nil { // io.EOF, or a broken tarball for OPA to report
			return "", false
		}
		if counted.n+hdr.Size > max {
			return hdr.Name, true
		}
	}
}

// checkDirectorySize fails when the files of a bundle directory that the loader reads (not
// the policy tests) add up to more than max bytes. What cannot be read is left to the loader.
func checkDirectorySize(root string, max int64) error {
	var total int64
	at := ""
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, "_test.rego") {
			if info, ierr := d.Info(); ierr == nil {
				total += info.Size()
			}
		}
		if total > max {
			at = p
			return filepath.SkipAll
		}
		return nil
	})
	if at != "" {
		return fmt.Errorf("%w: its files add up to more than %d bytes (at %s), the limit for a whole bundle", ErrBundleTooLarge, max, text.Escape(at))
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// errorBody is what an error keeps of a bundle server's answer: at most maxErrorBody bytes,
// cut at a character boundary and marked when cut, escaped, since it is printed to terminals
// and logs and the server may be anyone's.
func errorBody(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody+1))
	cut := ""
	if len(b) > maxErrorBody {
		b, cut = b[:maxErrorBody], fmt.Sprintf(" … (cut at %d bytes)", maxErrorBody)
		start := len(b) - 1 // drop a character the cut split
		for start > 0 && start > len(b)-utf8.UTFMax && !utf8.RuneStart(b[start]) {
			start--
		}
		if !utf8.FullRune(b[start:]) {
			b = b[:start]
		}
	}
	return text.Escape(strings.TrimSpace(string(b))) + cut
}
