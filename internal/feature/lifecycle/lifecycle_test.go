package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runtime is the fake runtime of clienttest, which can refuse to start
// containers (failStart, set before serve).
type runtime struct {
	*clienttest.Fake
	failStart bool
}

// auths are the credentials of the pulls so far.
func (r *runtime) auths() []*runtimeapi.AuthConfig {
	var out []*runtimeapi.AuthConfig
	for _, req := range r.Requests("PullImage") {
		out = append(out, req.(*runtimeapi.PullImageRequest).GetAuth())
	}
	return out
}

// serve starts r on a short unix socket and returns a client of it.
func serve(t *testing.T, r *runtime) *client.Client {
	t.Helper()
	if r.failStart {
		r.Before = func(_ context.Context, method string, _ proto.Message) error {
			if method == "StartContainer" {
				return status.Error(codes.Internal, "no start today")
			}
			return nil
		}
	}
	c, err := client.Dial(client.Settings{RuntimeEndpoint: clienttest.Serve(t, r.Fake), RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return c
}

const image = "docker.io/library/busybox:1.36"

// configs writes a pod config and a container config of image.
func configs(t *testing.T) (ctr, pod string) {
	t.Helper()
	dir := t.TempDir()
	pod = filepath.Join(dir, "pod.yaml")
	ctr = filepath.Join(dir, "ctr.json")
	if err := os.WriteFile(pod, []byte("metadata: {name: p, namespace: default}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ctr, []byte(`{"metadata": {"name": "c"}, "image": {"image": "`+image+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return ctr, pod
}

// A run whose container cannot start leaves nothing behind, and says so.
func TestRunRemovesWhatItCreated(t *testing.T) {
	r := &runtime{Fake: &clienttest.Fake{}, failStart: true}
	r.AddImage(&runtimeapi.Image{Id: "sha256:1", RepoTags: []string{image}})
	c := serve(t, r)
	ctr, pod := configs(t)
	var out, errOut bytes.Buffer
	err := Run(t.Context(), c, ctr, pod, "", Pull{Policy: PullIfMissing}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no start today") {
		t.Fatalf("Run: want the start's failure; got %v", err)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "which the failed run had created") {
		t.Errorf("Run: stdout %q, stderr %q; want no ID and the removal told", out.String(), errOut.String())
	}
	pods, err := c.ListPods(t.Context(), client.PodFilter{})
	if err != nil || len(pods) != 0 {
		t.Errorf("pods left behind: %v %v", pods, err)
	}
	ctrs, err := c.ListContainers(t.Context(), client.ContainerFilter{All: true})
	if err != nil || len(ctrs) != 0 {
		t.Errorf("containers left behind: %v %v", ctrs, err)
	}
	// The image was present: no pull.
	if len(r.auths()) != 0 {
		t.Errorf("pulled %d times, want 0 (the image is present)", len(r.auths()))
	}
}

// create pulls as its policy says, with crictl's credentials.
func TestCreatePullPolicy(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pull    Pull
		present bool
		auth    *runtimeapi.AuthConfig // nil: no pull
		err     string
	}{
		{name: "never", pull: Pull{Policy: PullNever}},
		{name: "if missing, present", pull: Pull{Policy: PullIfMissing}, present: true},
		{name: "if missing, missing, creds", pull: Pull{Policy: PullIfMissing, Credentials: creds("bob:se:cret", "", "")},
			auth: &runtimeapi.AuthConfig{Username: "bob", Password: "se:cret"}},
		{name: "always, auth", pull: Pull{Policy: PullAlways, Credentials: creds("", "Ym9iOng=", "")}, present: true,
			auth: &runtimeapi.AuthConfig{Auth: "Ym9iOng="}},
		{name: "always, username", pull: Pull{Policy: PullAlways, Credentials: creds("", "", "robot"), Password: strings.NewReader("pw\n")},
			auth: &runtimeapi.AuthConfig{Username: "robot", Password: "pw"}},
		{name: "creds and auth", pull: Pull{Policy: PullAlways, Credentials: creds("a:b", "x", "")}, err: "cannot both be given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &runtime{Fake: &clienttest.Fake{}}
			if tt.present {
				r.AddImage(&runtimeapi.Image{Id: "sha256:1", RepoTags: []string{image}})
			}
			c := serve(t, r)
			podID, err := c.RunPod(t.Context(), &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default"}}, "")
			if err != nil {
				t.Fatal(err)
			}
			ctr, pod := configs(t)
			var out, errOut bytes.Buffer
			err = Create(t.Context(), c, podID, ctr, pod, tt.pull, &out, &errOut)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Create: want an error with %q; got %v", tt.err, err)
				}
				return
			}
			if err != nil || len(strings.TrimSpace(out.String())) != 64 {
				t.Fatalf("Create: %v, stdout %q", err, out.String())
			}
			switch {
			case tt.auth == nil && len(r.auths()) != 0:
				t.Errorf("pulled with %v; want no pull", r.auths())
			case tt.auth != nil && (len(r.auths()) != 1 || r.auths()[0].String() != tt.auth.String()):
				t.Errorf("pulls %v; want one with %v", r.auths(), tt.auth)
			case tt.auth != nil && !strings.Contains(errOut.String(), "pulled image "+image):
				t.Errorf("stderr %q: want the pull told", errOut.String())
			}
		})
	}
}

func creds(c, a, u string) query.Credentials {
	return query.Credentials{Creds: c, Auth: a, Username: u}
}

// rm refuses a running container without force, removes it with force,
// and stop, rm and rmp resolve names.
func TestStopRemove(t *testing.T) {
	r := &runtime{Fake: &clienttest.Fake{}}
	r.AddImage(&runtimeapi.Image{Id: "sha256:1", RepoTags: []string{image}})
	c := serve(t, r)
	ctr, pod := configs(t)
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), c, ctr, pod, "", Pull{}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out.String())
	out.Reset()
	err := Remove(t.Context(), c, []string{"c"}, false, false, false, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is running; stop it first") || out.Len() != 0 {
		t.Fatalf("rm of a running container: want a refusal; got %v, stdout %q", err, out.String())
	}
	if err := Remove(t.Context(), c, []string{"c"}, false, true, false, &out, &errOut); err != nil || out.String() != id+"\n" {
		t.Fatalf("rm -f: %v, stdout %q; want %s", err, out.String(), id)
	}
	out.Reset()
	if err := Stop(t.Context(), c, nil, true, 0, &out, &errOut); err != nil || out.Len() != 0 || !strings.Contains(errOut.String(), "no running containers") {
		t.Errorf("stop -a with none running: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
	err = RemovePods(t.Context(), c, []string{"p"}, false, false, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Errorf("rmp of a ready pod: want a refusal; got %v", err)
	}
	if err := StopPods(t.Context(), c, []string{"p"}, &out); err != nil {
		t.Fatal(err)
	}
	if err := RemovePods(t.Context(), c, []string{"p"}, false, false, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var nf *client.NotFoundError
	if err := StopPods(t.Context(), c, []string{"p"}, &out); !errors.As(err, &nf) {
		t.Errorf("stopp of a removed pod: want not found; got %v", err)
	}
}

func TestLogsCheck(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		stream, since string
		tail          bool
		err           string
		want          time.Time
	}{
		{since: "5m", want: now.Add(-5 * time.Minute)},
		{since: "2013-01-02T13:23:37Z", want: time.Date(2013, 1, 2, 13, 23, 37, 0, time.UTC)},
		{stream: "stdout"},
		{stream: "both", err: `--stream "both"`},
		{stream: "stderr", tail: true, err: "cannot be combined"},
		{since: "yesterday", err: "yesterday"},
	} {
		o := LogsOptions{}
		o.Stream = tt.stream
		err := o.Check(tt.since, tt.tail, now)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: want an error with %q; got %v", tt, tt.err, err)
			}
			continue
		}
		if err != nil || !o.Since.Equal(tt.want) {
			t.Errorf("%+v: since %v, %v; want %v", tt, o.Since, err, tt.want)
		}
	}
}
