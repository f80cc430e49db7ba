package policysource

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"
)

// What makes a bundle trustworthy enough to decide upgrades: it comes over TLS, and when
// signed, its signature is verified with the admin's key (OPA's own bundle verification).

// defaultVerificationKeyID is the key id when BundleOptions.VerificationKeyID is empty, as in
// OPA's `opa run --verification-key-id`.
const defaultVerificationKeyID = "default"

// errInsecureHTTP is the refusal of a plain http bundle server.
var errInsecureHTTP = errors.New("plain http is refused: a policy fetched in clear text can be changed on the way; " +
	"serve the bundle over https, or allow http explicitly (tollgate run --allow-insecure-bundle-http)")

// checkScheme refuses a URL that is not https, unless allowInsecure and it is http.
func checkScheme(u *url.URL, allowInsecure bool) error {
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && allowInsecure:
		return nil
	case u.Scheme == "http":
		return errInsecureHTTP
	default:
		return fmt.Errorf("scheme %q is not supported: use https", u.Scheme)
	}
}

// refuseInsecureRedirects returns a copy of c that refuses redirects to anything but https
// (or http when allowInsecure), and keeps c's own redirect policy otherwise (at most 10, as
// net/http's default).
func refuseInsecureRedirects(c *http.Client, allowInsecure bool) *http.Client {
	out := *c
	next := c.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkScheme(req.URL, allowInsecure); err != nil {
			return fmt.Errorf("redirect to %s: %w", redactURL(req.URL), err)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &out
}

// redactURL drops user info and query, which may carry credentials.
func redactURL(u *url.URL) string {
	clean := *u
	clean.User, clean.RawQuery, clean.Fragment = nil, "", ""
	return clean.String()
}

// verification is OPA's verification configuration for o's key, or nil without a key.
func (o BundleOptions) verification() (*bundle.VerificationConfig, error) {
	if o.VerificationKey == "" {
		return nil, nil
	}
	alg := o.SigningAlgorithm
	if alg == "" {
		alg = "RS256"
	}
	if !keys.IsSupportedAlgorithm(alg) {
		return nil, fmt.Errorf("bundle signing algorithm %q is not supported", alg)
	}
	key, err := keyMaterial(o.VerificationKey)
	if err != nil {
		return nil, fmt.Errorf("bundle verification key: %w", err)
	}
	id := o.VerificationKeyID
	if id == "" {
		id = defaultVerificationKeyID
	}
	return bundle.NewVerificationConfig(map[string]*keys.Config{id: {Key: key, Algorithm: alg}}, id, "", nil), nil
}

// keyMaterial is the key v holds (PEM), or the content of the file v names, or else v itself
// (an HMAC secret), as OPA's --verification-key. (keys.NewKeyConfig would stat a PEM key as a
// file name, and fail on a long one.)
func keyMaterial(v string) (string, error) {
	if strings.Contains(v, "-----BEGIN ") {
		return v, nil
	}
	b, err := os.ReadFile(v)
	switch {
	case err == nil:
		return string(b), nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENAMETOOLONG):
		return v, nil
	default:
		return "", err
	}
}

// signatureHint adds what to do to OPA's errors about signatures.
func signatureHint(err error, verifying bool) error {
	msg := err.Error()
	switch {
	case !verifying && strings.Contains(msg, "verification key not provided"):
		return fmt.Errorf("%w: the bundle is signed (.signatures.json), so it is refused without a key to verify it with (tollgate run --bundle-verification-key)", err)
	case verifying && strings.Contains(msg, "bundle missing .signatures.json"):
		return fmt.Errorf("%w: a bundle verification key is configured, so every bundle must be signed (opa build --signing-key)", err)
	case verifying && (strings.Contains(msg, "signature") || strings.Contains(msg, "digest")):
		return fmt.Errorf("bundle signature does not verify: %w", err)
	}
	return err
}

// withoutTests leaves out policy tests (*_test.rego).
func withoutTests(mods []bundle.ModuleFile) []bundle.ModuleFile {
	out := mods[:0:0]
	for _, m := range mods {
		if !strings.HasSuffix(m.Path, "_test.rego") {
			out = append(out, m)
		}
	}
	return out
}
