package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The same binary gives the same tarball, byte for byte, which holds an OCI
// layout (index.json naming the image for containerd) and Docker's
// manifest.json pointing at blobs that are there.
func TestWriteIsReproducibleAndReadable(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "crisp")
	if err := os.WriteFile(bin, []byte("#!/bin/true\nnot really crisp\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, Name: "crisp", Tag: "v1.2.3", Arch: "amd64"}
	var tars [2][]byte
	for i := range tars {
		o.Out = filepath.Join(dir, "image.tar")
		if _, err := Write(o); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(o.Out)
		if err != nil {
			t.Fatal(err)
		}
		tars[i] = b
	}
	if !bytes.Equal(tars[0], tars[1]) {
		t.Fatal("two builds of the same binary differ")
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(tars[0]))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
	var index struct {
		Manifests []struct {
			MediaType   string            `json:"mediaType"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/crisp:v1.2.3" ||
		index.Manifests[0].MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("index.json: %s", files["index.json"])
	}
	var m tarball.Manifest
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil || len(m) != 1 {
		t.Fatalf("manifest.json: %v: %s", err, files["manifest.json"])
	}
	if m[0].RepoTags[0] != "crisp:v1.2.3" || files[m[0].Config] == nil || len(m[0].Layers) != 1 || files[m[0].Layers[0]] == nil {
		t.Errorf("manifest.json names blobs that are not there: %s", files["manifest.json"])
	}
	// go-containerregistry reads it back as an image whose entrypoint is the binary.
	img, err := tarball.ImageFromPath(o.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != Path || cf.OS != "linux" || !cf.Created.Equal(epoch) {
		t.Errorf("config: entrypoint %v os %s created %v", cf.Config.Entrypoint, cf.OS, cf.Created)
	}
}
