package olmv1

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const (
	// catalogRepo and bundleRepo are where the registry keeps the catalog image and the
	// bundle images (tagged v<version>).
	catalogRepo = "catalogs/tollgate-demo-catalog"
	bundleRepo  = "bundles/tollgate-demo"
	// catalogTag is the tag a ClusterCatalog follows; publishing a revision moves it.
	catalogTag = "latest"
	// configsLabel tells catalogd where in a catalog image the file-based catalog is.
	configsLabel = "operators.operatorframework.io.index.configs.v1"
	// registryVar is what a sample catalog says where the registry's address goes.
	registryVar = "${REGISTRY}"
)

// sample is a path in the sample package the registry serves.
func sample(elem ...string) string {
	return repo.Path(append([]string{"test", "testdata", "olmv1", "sample"}, elem...)...)
}

// registry is go-containerregistry's in-process OCI registry, served over TLS on a free port of
// 127.0.0.1: the images OLM v1 pulls.
type registry struct {
	t *testing.T
	// host is its address, host:port, as image references name it.
	host      string
	transport http.RoundTripper
}

// startRegistry serves an empty registry with c's serving certificate until the test ends; its
// log goes to logDir/registry.log.
func startRegistry(t *testing.T, c *certs, logDir string) *registry {
	t.Helper()
	logFile, err := os.Create(filepath.Join(logDir, "registry.log"))
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		Handler:           ggcrregistry.New(ggcrregistry.Logger(log.New(logFile, "", log.LstdFlags))),
		TLSConfig:         c.serverTLS(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = logFile.Close()
	})
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = c.clientTLS()
	return &registry{t: t, host: l.Addr().String(), transport: transport}
}

// bundleRef is the reference of the bundle image of version.
func (r *registry) bundleRef(version string) string {
	return fmt.Sprintf("%s/%s:v%s", r.host, bundleRepo, version)
}

// catalogRef is the reference a ClusterCatalog follows.
func (r *registry) catalogRef() string { return r.host + "/" + catalogRepo + ":" + catalogTag }

// pushBundles pushes the image of every bundle under dir (one folder per version).
func (r *registry) pushBundles(dir string) {
	r.t.Helper()
	versions, err := os.ReadDir(dir)
	require.NoError(r.t, err)
	for _, v := range versions {
		img, err := bundleImage(filepath.Join(dir, v.Name()))
		require.NoError(r.t, err, "bundle %s", v.Name())
		r.push(r.bundleRef(v.Name()), img)
	}
}

// publishCatalog pushes the catalog folder dir as the catalog image, under the tag
// ClusterCatalogs follow (catalogd sees it at its next poll), and returns the image's digest.
func (r *registry) publishCatalog(dir string) v1.Hash {
	r.t.Helper()
	img, err := catalogImage(dir, r.host)
	require.NoError(r.t, err, "catalog %s", dir)
	return r.push(r.catalogRef(), img)
}

func (r *registry) push(ref string, img v1.Image) v1.Hash {
	r.t.Helper()
	tag, err := name.NewTag(ref)
	require.NoError(r.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(r.t, remote.Write(tag, img, remote.WithTransport(r.transport), remote.WithContext(ctx)), "push %s", ref)
	digest, err := img.Digest()
	require.NoError(r.t, err)
	return digest
}

// pull reads the image ref from the registry.
func (r *registry) pull(ref string) (v1.Image, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	return remote.Image(parsed, remote.WithTransport(r.transport))
}

// bundleImage is a registry+v1 bundle image: one layer holding the bundle's manifests/ and
// metadata/, labelled with metadata/annotations.yaml's annotations, as operator-sdk builds it.
func bundleImage(dir string) (v1.Image, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("annotations.yaml: %w", err)
	}
	if len(meta.Annotations) == 0 {
		return nil, errors.New("annotations.yaml has no annotations")
	}
	layer, err := dirLayer(dir, "", nil)
	if err != nil {
		return nil, err
	}
	return imageOf(layer, meta.Annotations)
}

// catalogImage is a file-based catalog image: one layer with the catalog folder dir under
// configs/, registryVar replaced by host, and the label that says so.
func catalogImage(dir, host string) (v1.Image, error) {
	layer, err := dirLayer(dir, "configs", func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(registryVar), []byte(host))
	})
	if err != nil {
		return nil, err
	}
	return imageOf(layer, map[string]string{configsLabel: "/configs"})
}

// imageOf is a linux image of the one layer with labels.
func imageOf(layer v1.Layer, labels map[string]string) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Labels = labels
	return mutate.ConfigFile(img, cfg)
}

// dirLayer is a layer holding the files and folders under dir, at prefix, each file's content
// passed through edit when not nil. Entries are in lexical order, with fixed owners, modes and
// times, so the same folder gives the same digest.
func dirLayer(dir, prefix string, edit func([]byte) []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel == "." && prefix == "" {
			return nil // the layer's root
		}
		hdr := &tar.Header{Name: filepath.ToSlash(filepath.Join(prefix, rel)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if edit != nil {
			data = edit(data)
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("layer of %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// layerFiles reads the regular files of an image's layers, by path.
func layerFiles(img v1.Image) (map[string]string, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if hdr.Typeflag == tar.TypeReg {
				var b strings.Builder
				if _, err := io.Copy(&b, tr); err != nil { //nolint:gosec // the test's own small layers
					return nil, err
				}
				files[hdr.Name] = b.String()
			}
		}
		_ = rc.Close()
	}
	return files, nil
}
