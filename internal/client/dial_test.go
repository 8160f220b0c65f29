package client

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// versionError dials endpoint (as the runtime or, with image, as the image
// endpoint) and returns the error of one call, as a command would print it.
func versionError(t *testing.T, endpoint string, image bool) error {
	t.Helper()
	settings := Settings{RuntimeEndpoint: endpoint, RequestTimeout: 5 * time.Second}
	if image {
		settings.RuntimeEndpoint, settings.ImageEndpoint = "unix:///nonexistent/runtime.sock", endpoint
	}
	c, err := Dial(settings)
	if err != nil {
		t.Fatalf("Dial(%s): %v", endpoint, err)
	}
	defer func() { _ = c.Close() }()
	call := func(ctx context.Context) error {
		_, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
		return err
	}
	if image {
		return c.CallImages(context.Background(), "listing images", func(ctx context.Context) error {
			_, err := c.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
			return err
		})
	}
	return c.Call(context.Background(), "version", call)
}

// TestDialNotASocket: an endpoint that exists but is not a socket is
// reported as what it is, not as "connection refused; is the runtime
// running?"; a missing socket and a socket nobody listens on keep their
// messages.
func TestDialNotASocket(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.sock")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.sock")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	subdir := filepath.Join(dir, "dir.sock")
	if err := os.Mkdir(subdir, 0o700); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(dir, "refused.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: refused, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false) // leave the socket file behind with nobody listening
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.sock")
	if err := os.Symlink(subdir, link); err != nil {
		t.Fatal(err)
	}
	const runHint = "; is the runtime running? point crisp at it with -r/--runtime-endpoint or CONTAINER_RUNTIME_ENDPOINT"
	const socketHint = "; a runtime endpoint is the runtime's unix socket: point crisp at it with -r/--runtime-endpoint or CONTAINER_RUNTIME_ENDPOINT"
	for _, tc := range []struct {
		name, endpoint string
		want           string
	}{
		{"regular file", "unix://" + file, ": " + file + " is a regular file, not a socket" + socketHint},
		{"directory", "unix://" + subdir, ": " + subdir + " is a directory, not a socket" + socketHint},
		{"FIFO", "unix://" + fifo, ": " + fifo + " is a named pipe (FIFO), not a socket" + socketHint},
		{"bare path to a file", file, ": " + file + " is a regular file, not a socket" + socketHint},
		{"link to a directory", "unix://" + link, ": " + link + " is a directory, not a socket" + socketHint},
		{"missing", "unix://" + filepath.Join(dir, "missing.sock"), "connect: no such file or directory" + runHint},
		{"refused", "unix://" + refused, "connect: connection refused" + runHint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := versionError(t, tc.endpoint, false)
			want := "version: runtime at " + tc.endpoint + " is unreachable"
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant %q ... %q", err, want, tc.want)
			}
		})
	}
	t.Run("image endpoint", func(t *testing.T) {
		err := versionError(t, "unix://"+subdir, true)
		want := subdir + " is a directory, not a socket; a runtime endpoint is the runtime's unix socket: check IMAGE_SERVICE_ENDPOINT or image-endpoint in the config file"
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("error = %v\nwant it to end %q", err, want)
		}
	})
}
