// Command pushlayout pushes every image of an OCI image layout (the tar that
// scripts/containerd/mkimages.sh writes, unpacked) into a plain-HTTP registry
// on this machine: each index entry's io.containerd.image.name annotation
// names the image, pushed as REGISTRY/NAME (crisp.local/busybox:1 becomes
// 127.0.0.1:PORT/crisp.local/busybox:1). The CRI-O harness
// (scripts/crio/up.sh) runs it: CRI-O imports nothing through the CRI, it
// only pulls, so the test images go through a local registry onto which its
// registries.conf maps the original names.
//
// The registry API's push is three requests per blob and one per manifest,
// written here with net/http alone: go-containerregistry's remote package
// would bring docker/cli's config code into go.mod for nothing.
//
// Usage: go run ./scripts/crio/pushlayout LAYOUT-DIR 127.0.0.1:PORT
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pushlayout LAYOUT-DIR REGISTRY-HOST:PORT")
		os.Exit(2) //nolint:forbidigo // a harness tool's own main: the script reads its exit status
	}
	if err := push(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "pushlayout:", err)
		os.Exit(1) //nolint:forbidigo // a harness tool's own main: the script reads its exit status
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
}

type manifest struct {
	Config descriptor   `json:"config"`
	Layers []descriptor `json:"layers"`
}

var client = &http.Client{Timeout: time.Minute}

func push(dir, registry string) error {
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := readJSON(filepath.Join(dir, "index.json"), &index); err != nil {
		return err
	}
	pushed := 0
	for _, d := range index.Manifests {
		ref := d.Annotations["io.containerd.image.name"]
		if ref == "" {
			continue
		}
		// crisp.local/busybox:1 -> repository crisp.local/busybox, tag 1.
		i := strings.LastIndex(ref, ":")
		if i < 0 || strings.Contains(ref[i:], "/") {
			return fmt.Errorf("%s: the image name has no tag", ref)
		}
		repo, tag := ref[:i], ref[i+1:]
		var m manifest
		if err := readJSON(blobPath(dir, d.Digest), &m); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		for _, b := range append([]descriptor{m.Config}, m.Layers...) {
			if err := pushBlob(dir, registry, repo, b.Digest); err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
		}
		body, err := os.ReadFile(blobPath(dir, d.Digest))
		if err != nil {
			return err
		}
		u := fmt.Sprintf("http://%s/v2/%s/manifests/%s", registry, repo, tag)
		if err := do(http.MethodPut, u, d.MediaType, body, http.StatusCreated); err != nil {
			return fmt.Errorf("%s: manifest: %w", ref, err)
		}
		pushed++
	}
	if pushed == 0 {
		return errors.New(dir + ": no image carries an io.containerd.image.name annotation")
	}
	return nil
}

// pushBlob uploads one blob unless the registry has it: a monolithic upload
// (POST for a session, PUT of the whole blob with its digest).
func pushBlob(dir, registry, repo, digest string) error {
	head := fmt.Sprintf("http://%s/v2/%s/blobs/%s", registry, repo, digest)
	if err := do(http.MethodHead, head, "", nil, http.StatusOK); err == nil {
		return nil
	}
	resp, err := client.Post(fmt.Sprintf("http://%s/v2/%s/blobs/uploads/", registry, repo), "", nil)
	if err != nil {
		return err
	}
	_ = resp.Body.Close() // the Location header is all we need
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("starting the upload of %s: %s", digest, resp.Status)
	}
	loc, err := resp.Location()
	if err != nil {
		return fmt.Errorf("starting the upload of %s: %w", digest, err)
	}
	q := loc.Query()
	q.Set("digest", digest)
	loc.RawQuery = q.Encode()
	data, err := os.ReadFile(blobPath(dir, digest))
	if err != nil {
		return err
	}
	return do(http.MethodPut, loc.String(), "application/octet-stream", data, http.StatusCreated)
}

func do(method, rawURL, contentType string, body []byte, want int) error {
	if _, err := url.Parse(rawURL); err != nil {
		return err
	}
	req, err := http.NewRequest(method, rawURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read below; nothing to tell on close
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512)) // for the error only
		return fmt.Errorf("%s %s: %s %s", method, rawURL, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

func blobPath(dir, digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(dir, "blobs", alg, hex)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
