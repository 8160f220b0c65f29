// The image: one layer holding the binary at Path, on no base.

package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Options says what to pack and where.
type Options struct {
	Binary, Name, Tag, Arch, Out string
}

// Path is where the binary sits in the image, and its entrypoint.
const Path = "/crisp"

// epoch is every timestamp in the image, so that it is reproducible.
var epoch = time.Unix(0, 0).UTC()

// Ref is the image's full reference, as containerd and the kubelet name it.
func (o Options) Ref() string { return "docker.io/library/" + o.Name + ":" + o.Tag }

// Image builds the image: one layer holding the binary, entrypoint the binary.
func Image(binary []byte, o Options) (v1.Image, error) {
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	hdr := &tar.Header{Name: Path[1:], Mode: 0o755, Size: int64(len(binary)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "crisp make image: COPY crisp " + Path}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = []string{Path}
	cf.Config.Cmd = []string{"--help"}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   o.Name,
		"org.opencontainers.image.version": o.Tag,
		"org.opencontainers.image.source":  "https://github.com/crisp-cri/crisp",
	}
	return mutate.ConfigFile(img, cf)
}

// Write builds the image from o.Binary and writes the tarball to o.Out; it
// returns the manifest's digest.
func Write(o Options) (v1.Hash, error) {
	binary, err := os.ReadFile(o.Binary)
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := Image(binary, o)
	if err != nil {
		return v1.Hash{}, err
	}
	dir, err := os.MkdirTemp("", "crisp-image-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary folder
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	// containerd names the imported image after io.containerd.image.name;
	// the OCI layout spec's ref.name is the tag.
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          o.Ref(),
		"org.opencontainers.image.ref.name": o.Tag,
	})); err != nil {
		return v1.Hash{}, err
	}
	if err := writeDockerManifest(dir, img, o); err != nil {
		return v1.Hash{}, err
	}
	if err := tarDir(dir, o.Out); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// writeDockerManifest adds Docker's manifest.json (docker load and podman
// load read it) pointing at the layout's blobs, as docker save does since
// Docker 25.
func writeDockerManifest(dir string, img v1.Image, o Options) error {
	cfg, err := img.ConfigName()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	d := tarball.Descriptor{Config: blobPath(cfg), RepoTags: []string{o.Name + ":" + o.Tag}}
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return err
		}
		d.Layers = append(d.Layers, blobPath(h))
	}
	b, err := json.Marshal(tarball.Manifest{d})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644)
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// tarDir writes dir's files to out in name order, with fixed owners, modes
// and times: the same files give the same bytes.
func tarDir(dir, out string) error {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, name := range names {
		if err := addFile(tw, dir, name); err != nil {
			_ = f.Close() // the first error says more
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		_ = f.Close() // the first error says more
		return err
	}
	return f.Close()
}

func addFile(tw *tar.Writer, dir, name string) error {
	path := filepath.Join(dir, filepath.FromSlash(name))
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, Mode: 0o644, ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if st.IsDir() {
		hdr.Name, hdr.Mode, hdr.Typeflag = name+"/", 0o755, tar.TypeDir
		return tw.WriteHeader(hdr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	hdr.Size = int64(len(data))
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}
