package debug

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// decoyImage is what a tenant can get onto a node: a name that contains
// busybox, sorted before the real one.
const decoyImage = "docker.io/attacker/busybox-tools:latest"

// fakeNode is clienttest's runtime holding a running target "t1" in a
// ready pod "p1", and a runner against it whose sessions exit 0.
func fakeNode(t *testing.T, images ...string) (*clienttest.Fake, Runner, *bytes.Buffer) {
	t.Helper()
	cri := &clienttest.Fake{}
	cri.AddPod(&runtimeapi.PodSandbox{Id: "p1", State: runtimeapi.PodSandboxState_SANDBOX_READY})
	cri.AddContainer(&runtimeapi.Container{Id: "t1", PodSandboxId: "p1", State: runtimeapi.ContainerState_CONTAINER_RUNNING,
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}})
	for i, ref := range images {
		cri.AddImage(&runtimeapi.Image{Id: "sha256:" + strings.Repeat(string(rune('a'+i)), 64), RepoTags: []string{ref}})
	}
	endpoint := clienttest.Serve(t, cri)
	stderr := &bytes.Buffer{}
	deps := session.Deps{
		Streams: cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: stderr},
		Settings: func() (client.Settings, error) {
			return client.Settings{RuntimeEndpoint: endpoint, RequestTimeout: 10 * time.Second}, nil
		},
		Dial: client.Dial,
		Stream: func(context.Context, string, transport.URLSource, []transport.Offer, transport.Config, remotecommand.Streams) (remotecommand.Result, error) {
			return remotecommand.Result{}, nil
		},
	}
	return cri, testRunner(t, deps), stderr
}

// The default image is one exact reference: with only a decoy whose name
// contains busybox on the node, debug fails naming the image it wants and
// how to get it, and creates nothing.
func TestDefaultImageIsNeverSearched(t *testing.T) {
	cri, rn, _ := fakeNode(t, decoyImage, "registry.k8s.io/e2e-test-images/busybox:1.29-2")
	err := rn.Run(context.Background(), Request{Target: "t1", Command: []string{"true"}, Profile: ProfileGeneral, Way: WayContainer})
	if err == nil {
		t.Fatal("debug ran with no exact default image on the node")
	}
	for _, want := range []string{DefaultImage, "crisp pull " + DefaultImage, "--image"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if reqs := cri.Requests("CreateContainer"); len(reqs) != 0 {
		t.Errorf("a debug container was created: %v", reqs)
	}
}

// With the default image present beside the decoy, the debug container
// runs the default, under the runtime's default seccomp profile, with
// only the profile's capability added; stderr names the image.
func TestDebugContainerImageAndSeccomp(t *testing.T) {
	for _, tc := range []struct {
		profile Profile
		add     []string
	}{{ProfileGeneral, []string{"SYS_PTRACE"}}, {ProfileNetadmin, []string{"NET_ADMIN", "NET_RAW"}}} {
		t.Run(string(tc.profile), func(t *testing.T) {
			cri, rn, stderr := fakeNode(t, decoyImage, DefaultImage)
			if err := rn.Run(context.Background(), Request{Target: "t1", Command: []string{"true"}, Profile: tc.profile, Way: WayContainer}); err != nil {
				t.Fatal(err)
			}
			reqs := cri.Requests("CreateContainer")
			if len(reqs) != 1 {
				t.Fatalf("%d CreateContainer calls, want 1", len(reqs))
			}
			cfg := reqs[0].(*runtimeapi.CreateContainerRequest).GetConfig()
			if got := cfg.GetImage().GetImage(); got != DefaultImage {
				t.Errorf("image %q, want %q", got, DefaultImage)
			}
			sc := cfg.GetLinux().GetSecurityContext()
			// RuntimeDefault is the enum's zero: a nil profile means
			// "unconfined" to containerd, so it must be set.
			if sc.GetSeccomp() == nil || sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
				t.Errorf("seccomp %v, want RuntimeDefault", sc.GetSeccomp())
			}
			if sc.GetPrivileged() || strings.Join(sc.GetCapabilities().GetAddCapabilities(), ",") != strings.Join(tc.add, ",") {
				t.Errorf("privileged %v, capabilities %v; want only %v added", sc.GetPrivileged(), sc.GetCapabilities(), tc.add)
			}
			if !strings.Contains(stderr.String(), "image "+DefaultImage) {
				t.Errorf("stderr does not name the image: %q", stderr)
			}
		})
	}
}

// The image crisp names on stderr is escaped: a reference is the user's,
// but a runtime's answer may carry anything.
func TestImageNoticeEscaped(t *testing.T) {
	var b bytes.Buffer
	imageNotice(&b, "evil\x1b]0;x\a:1", "sha256:\x1b[2J")
	if strings.ContainsAny(b.String(), "\x1b\a") {
		t.Errorf("raw control bytes reach the terminal: %q", b.String())
	}
}
