package client

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

// -D prints each CRI request and response as crictl's debug does:
// "<Method>Request: <text>" and "<Method>Response: <text>", and the error
// of a call that fails.
func TestDebugOutPrintsEachRequestAndResponse(t *testing.T) {
	f := &clienttest.Fake{}
	f.AddImage(&runtimeapi.Image{Id: "sha256:1111", RepoTags: []string{"docker.io/library/busybox:latest"}})
	var debug bytes.Buffer
	c, err := Dial(Settings{RuntimeEndpoint: clienttest.Serve(t, f), RequestTimeout: 10 * time.Second, DebugOut: &debug})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.ListImages(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(debug.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a request and a response line, got:\n%s", debug.String())
	}
	for i, want := range []string{`msg="ListImagesRequest: `, `msg="ListImagesResponse: images:{id:\"sha256:1111\"`} {
		if !strings.Contains(lines[i], "level=debug ") || !strings.Contains(strings.Join(strings.Fields(lines[i]), " "), want) {
			t.Errorf("line %d = %q, want it to hold %q", i+1, lines[i], want)
		}
	}
}
