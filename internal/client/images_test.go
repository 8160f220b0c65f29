package client

import (
	"errors"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestParseCreds(t *testing.T) {
	for _, tt := range []struct{ in, user, pass, err string }{
		{in: "bob", user: "bob"},
		{in: "bob:secret", user: "bob", pass: "secret"},
		{in: "bob:se:cr:et", user: "bob", pass: "se:cr:et"},
		{in: "bob:", user: "bob"},
		{in: ":secret", err: "username"},
		{in: "", err: "empty"},
	} {
		user, pass, err := ParseCreds(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseCreds(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || user != tt.user || pass != tt.pass {
			t.Errorf("ParseCreds(%q) = %q, %q, %v", tt.in, user, pass, err)
		}
	}
}

// FuzzParseCreds: whatever the input, either an error or a non-empty user
// that, joined back with the password, gives the input.
func FuzzParseCreds(f *testing.F) {
	for _, s := range []string{"bob", "bob:secret", "bob:a:b", ":x", "", ":", "ü:ß", "user:\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, creds string) {
		user, pass, err := ParseCreds(creds)
		if err != nil {
			if creds != "" && !errors.Is(err, ErrEmptyUsername) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if user == "" || strings.Contains(user, ":") {
			t.Fatalf("user %q from %q", user, creds)
		}
		if joined := user + ":" + pass; joined != creds && (pass != "" || user != creds) {
			t.Fatalf("%q split into %q and %q", creds, user, pass)
		}
	})
}

func TestMatchImage(t *testing.T) {
	img := &runtimeapi.Image{
		Id:          "sha256:6585" + strings.Repeat("a", 60),
		RepoTags:    []string{"docker.io/library/busybox:latest", "registry.k8s.io/pause:3.9"},
		RepoDigests: []string{"docker.io/library/busybox@sha256:1234"},
	}
	for ref, want := range map[string]bool{
		"": true, "busybox": true, "busybox:latest": true, "docker.io/library/busybox": true,
		// A repository without a tag names each of its tags, as `docker
		// images REPO` and `crictl images REPO` list them.
		"registry.k8s.io/pause:3.9": true, "registry.k8s.io/pause": true, "registry.k8s.io/paus": false, "pause:3.9": false,
		"6585": true, "sha256:6585": true, "65": false, img.GetId(): true, "busybox@sha256:1234": true,
		"nginx": false, "bus": false, "6585z": false,
	} {
		if got := MatchImage(img, ref); got != want {
			t.Errorf("MatchImage(%q) = %v, want %v", ref, got, want)
		}
	}
}
