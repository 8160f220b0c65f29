package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/certs"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/transport"
)

// The streaming servers' sessions end as the doctor's do; what is left is
// bounded: the mock's stuck handlers (testkit.StreamingServerStuck) and
// client-go's WebSocket heartbeat of an attach the doctor ends, which returns
// at its next ping on the closed connection; and client-go's SPDY stream
// creation of a kube attach whose window ended before the server's replies
// came (a loaded machine): spdystream's WaitTimeout hears neither the
// cancelled context nor the closed connection, only its own 30 s timer.
// Matched by client-go's frames, so crisp's own SPDY client (spdyconn,
// which waits in short slices) stays checked.
func TestMain(m *testing.M) {
	os.Exit(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace, Opts: []goleak.Option{
		testkit.StreamingServerStuck(),
		goleak.IgnoreTopFunction("k8s.io/client-go/tools/remotecommand.(*heartbeat).start"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/remotecommand.(*streamProtocolV2).createStreams"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/remotecommand.(*streamProtocolV3).createStreams"),
	}}.Run())
}

// fixture is a mock runtime with one running container and a walker on it.
type fixture struct {
	env *mocktest.Env
	ctr string
	pod string
	w   *walker
}

func newFixture(t testing.TB, cfg mockruntime.Config, spec mocktest.ContainerSpec) *fixture {
	t.Helper()
	env := mocktest.Start(t, cfg)
	pod := env.RunPod(t, "doctor-pod")
	if spec.Command == nil {
		spec.Command = []string{"sh", "-c", "while :; do echo tick; sleep 0.2; done"}
	}
	ctr := env.RunContainer(t, pod, spec)
	return &fixture{env: env, ctr: ctr, pod: pod, w: newWalker(t, env.Endpoint, ctr)}
}

func newWalker(t testing.TB, endpoint, ref string) *walker {
	t.Helper()
	c, err := client.Dial(client.Settings{RuntimeEndpoint: endpoint, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &walker{c: c, cfg: transport.NewConfig(transport.ConfigOptions{}), ref: ref, cmd: []string{DefaultCommand}, hopTimeout: 10 * time.Second, attachWindow: defaultAttachWindow}
}

// names lists the hops' names and outcomes: "runtime=pass tcp=fail".
func names(hops []Hop) string {
	var s []string
	for _, h := range hops {
		s = append(s, h.Name+"="+string(h.Outcome))
	}
	return strings.Join(s, " ")
}

// last is the walk's last hop, which must be the failed one.
func failedAt(t *testing.T, hops []Hop, hop string) Hop {
	t.Helper()
	h := hops[len(hops)-1]
	if h.Name != hop || h.Outcome != Fail {
		t.Fatalf("want the walk to stop failing at %s; got %s\nlast: %+v", hop, names(hops), h)
	}
	return h
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s %q does not say %q", what, got, want)
		}
	}
}

func TestHealthyFullProfilePassesEveryHop(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	fx.w.port = int32(testkit.Echo(t))
	hops := fx.w.walk(context.Background())
	want := "runtime=pass runtime-ready=pass target=pass exec-rpc=pass tcp=pass tls=skip upgrade-websocket-v5=pass upgrade-spdy=pass upgrade-websocket-v4=pass exec=pass attach=pass port-forward=pass"
	if got := names(hops); got != want {
		t.Fatalf("hops\n got %s\nwant %s\n%+v", got, want, hops)
	}
	contains(t, "exec-rpc", hops[3].Detail, "scheme http", "host 127.0.0.1", "loopback", "/exec/REDACTED")
	contains(t, "exec", hops[9].Detail, `"true" exited 0`, "WebSocket v5.channel.k8s.io")
	contains(t, "port-forward", hops[11].Detail, "answered")
	for _, h := range hops {
		if h.Outcome == Pass && h.Latency <= 0 {
			t.Errorf("hop %s has no latency", h.Name)
		}
	}
}

// containerd and CRI-O serve no v5: a note and a fallback, never a failure.
func TestV5RefusedIsAFallbackNote(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming}, mocktest.ContainerSpec{})
	hops := fx.w.walk(context.Background())
	byName := map[string]Hop{}
	for _, h := range hops {
		byName[h.Name] = h
	}
	v5 := byName["upgrade-websocket-v5"]
	if v5.Outcome != Note || v5.Signature != "HTTP 403" {
		t.Fatalf("v5 refused: want a note with HTTP 403, got %+v", v5)
	}
	contains(t, "v5's meaning", v5.Cause, "fall back", "SPDY v5..v1")
	contains(t, "v5's fix", v5.Fix, "not a failure")
	if byName[HopExec].Outcome != Pass || byName[HopAttach].Outcome != Pass {
		t.Fatalf("exec and attach must pass after the fallback: %s", names(hops))
	}
	contains(t, "exec", byName[HopExec].Detail, "fallback", "SPDY v4.channel.k8s.io")
}

func TestRefusedUpgradeFailsAtTheLastStep(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{Faults: []streamserver.Fault{{Kind: streamserver.FaultRefuseUpgrade}}}, mocktest.ContainerSpec{})
	hops := fx.w.walk(context.Background())
	h := failedAt(t, hops, "upgrade-websocket-v4")
	if h.Signature != "HTTP 403" {
		t.Errorf("signature %q, want HTTP 403", h.Signature)
	}
	contains(t, "tried", h.Tried, "WebSocket v5.channel.k8s.io at", "SPDY v5..v1 at", "REDACTED")
	// The single-use tokens stay out of the report, as out of traces.
	for _, h := range hops {
		if strings.Contains(h.Error, "/exec/") && !strings.Contains(h.Error, "/exec/REDACTED") {
			t.Errorf("hop %s quotes a streaming token: %q", h.Name, h.Error)
		}
	}
	contains(t, "cause", h.Cause, "refused every protocol", "HTTP 403")
	contains(t, "fix", h.Fix, "crisp probe")
}

// A streaming server that died while the runtime's gRPC answers: the URL
// comes, nothing listens at it. The runtime names itself containerd, so
// the fix names containerd's keys.
func TestDeadStreamingServerFailsAtTCPWithTheRuntimesKeys(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{Quirks: mockruntime.Quirks{RuntimeName: "containerd"}}, mocktest.ContainerSpec{})
	if err := fx.env.Runtime.StreamServer().Stop(); err != nil {
		t.Fatal(err)
	}
	hops := fx.w.walk(context.Background())
	h := failedAt(t, hops, HopTCP)
	if h.Signature != sigRefused {
		t.Errorf("signature %q, want %q", h.Signature, sigRefused)
	}
	contains(t, "tried", h.Tried, "TCP connect to 127.0.0.1:")
	contains(t, "cause", h.Cause, "(containerd 1.x)", "nothing accepts connections there")
	contains(t, "fix", h.Fix, "stream_server_address", "stream_server_port", `[plugins."io.containerd.grpc.v1.cri"]`, "restart containerd")
}

func TestStoppedContainerFailsAtTarget(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	stop(t, fx)
	h := failedAt(t, fx.w.walk(context.Background()), HopTarget)
	if h.Signature != sigNotRunning {
		t.Errorf("signature %q, want %q", h.Signature, sigNotRunning)
	}
	contains(t, "error", h.Error, "is Exited")
	contains(t, "fix", h.Fix, "crisp start", "crisp logs")
}

func stop(t *testing.T, fx *fixture) {
	t.Helper()
	c := fx.w.c
	if err := c.StopContainer(context.Background(), fx.ctr, 0); err != nil {
		t.Fatal(err)
	}
}

func TestMissingBinaryIs127AtExec(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	fx.w.cmd = []string{"/nonexistent-crisp-doctor"}
	h := failedAt(t, fx.w.walk(context.Background()), HopExec)
	if h.Signature != "exit 127" {
		t.Errorf("signature %q, want exit 127", h.Signature)
	}
	contains(t, "cause", h.Cause, "could not find", "/nonexistent-crisp-doctor", "no such file")
	contains(t, "fix", h.Fix, "--command")
}

func TestNotExecutableIs126AtExec(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fx.w.cmd = []string{plain}
	h := failedAt(t, fx.w.walk(context.Background()), HopExec)
	if h.Signature != "exit 126" {
		t.Errorf("signature %q, want exit 126", h.Signature)
	}
	contains(t, "cause", h.Cause, "cannot be executed", "not an executable file")
	contains(t, "fix", h.Fix, "chmod +x")
}

func TestPortNotListeningIsNamed(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	fx.w.port = int32(freePort(t))
	h := failedAt(t, fx.w.walk(context.Background()), HopPortForward)
	if h.Signature != sigRefused {
		t.Errorf("signature %q, want %q (error %q)", h.Signature, sigRefused, h.Error)
	}
	contains(t, "cause", h.Cause, "nothing listens on port", "connection refused")
}

// freePort is a loopback port nothing listens on (a moment ago).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

func TestMissingSocketFailsAtRuntime(t *testing.T) {
	dir := t.TempDir()
	w := newWalker(t, "unix://"+filepath.Join(dir, "gone.sock"), "x")
	h := failedAt(t, w.walk(context.Background()), HopRuntime)
	if h.Signature != sigNoSocket {
		t.Errorf("signature %q, want %q (error %q)", h.Signature, sigNoSocket, h.Error)
	}
	contains(t, "cause", h.Cause, "nothing at unix://", "not running")
	contains(t, "fix", h.Fix, "-r/--runtime-endpoint", "[grpc] address", "[crio.api] listen", "containerRuntimeEndpoint")
}

func TestUntrustedCAFailsAtTLS(t *testing.T) {
	dir := t.TempDir()
	serverTLS, err := certs.Generate(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t, mockruntime.Config{StreamTLS: serverTLS}, mocktest.ContainerSpec{})
	h := failedAt(t, fx.w.walk(context.Background()), HopTLS)
	if h.Signature != sigTLSUnknownCA {
		t.Errorf("signature %q, want %q (error %q)", h.Signature, sigTLSUnknownCA, h.Error)
	}
	contains(t, "cause", h.Cause, "signed by a CA crisp was not given")
	contains(t, "fix", h.Fix, "--tls-ca")

	// With the CA, the hop says which CA verified the chain, and the walk
	// goes on over https.
	pem, err := os.ReadFile(filepath.Join(dir, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	fx.w.tlsCfg = &tls.Config{RootCAs: pool}
	fx.w.cfg = transport.NewConfig(transport.ConfigOptions{TLS: fx.w.tlsCfg})
	hops := fx.w.walk(context.Background())
	for _, h := range hops {
		if h.Failed() {
			t.Fatalf("with the CA: %s\n%+v", names(hops), h)
		}
		if h.Name == HopTLS {
			contains(t, "tls", h.Detail, "verified by CA", "--tls-ca")
		}
	}
}

func TestPodRefResolvesToItsRunningContainer(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	fx.w.ref = fx.pod
	hops := fx.w.walk(context.Background())
	if hops[2].Name != HopTarget || hops[2].Outcome != Pass || fx.w.target.Container != fx.ctr {
		t.Fatalf("pod reference: %s, target %+v", names(hops), fx.w.target)
	}
}

// crisp fleet's target has one name in every pod of its run (a retried
// node has two): --pod picks the one of crisp's own pod.
func TestPodNarrowsAContainerNameToThatPod(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{Name: "target"})
	other := fx.env.RunPod(t, "other-pod")
	otherCtr := fx.env.RunContainer(t, other, mocktest.ContainerSpec{Name: "target", Command: []string{"sleep", "600"}})
	fx.w.ref = "target"
	hops := fx.w.walk(context.Background())
	failedAt(t, hops, HopTarget)
	contains(t, "ambiguous name", hops[len(hops)-1].Error, "target")

	for pod, want := range map[string]string{"doctor-pod": fx.ctr, other: otherCtr} {
		fx.w.pod = pod
		hops = fx.w.walk(context.Background())
		if hops[2].Name != HopTarget || hops[2].Outcome != Pass || fx.w.target.Container != want {
			t.Fatalf("--pod %s: %s, target %+v, want container %s", pod, names(hops), fx.w.target, want)
		}
	}
	fx.w.pod = "no-such-pod"
	hops = fx.w.walk(context.Background())
	h := failedAt(t, hops, HopTarget)
	contains(t, "unknown pod", h.Error+" "+h.Tried, "--pod", "no-such-pod", "as a container of pod")
}

func TestNoTargetChecksTheRuntimeOnly(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	fx.w.ref = ""
	if got := names(fx.w.walk(context.Background())); got != "runtime=pass runtime-ready=pass target=skip" {
		t.Fatalf("got %s", got)
	}
}

// containerd 2.x reports a condition of its own, false on a cgroup v1
// host: a note, not a warning; NetworkReady false still warns.
func TestOwnRuntimeConditionIsANote(t *testing.T) {
	h := Hop{Name: HopReady, Outcome: Pass}
	judgeConditions(&h, Containerd2, "unix:///run/containerd/containerd.sock", []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, {Type: runtimeapi.NetworkReady, Status: true},
		{Type: "ContainerdHasNoDeprecationWarnings", Status: false, Reason: "ContainerdHasDeprecationWarnings", Message: "cgroup v1 is deprecated"},
	})
	if h.Outcome != Note || !strings.Contains(h.Fix, "nothing to fix") {
		t.Errorf("own condition: %+v", h)
	}
	h = Hop{Name: HopReady, Outcome: Pass}
	judgeConditions(&h, Containerd2, "", []*runtimeapi.RuntimeCondition{
		{Type: "ContainerdHasNoDeprecationWarnings", Status: false}, {Type: runtimeapi.NetworkReady, Status: false},
	})
	if h.Outcome != Warn {
		t.Errorf("NetworkReady false: %+v", h)
	}
}

// The TCP hop's explanation follows what was seen: a connection cut as it
// was made is not a missing server (no config key fixes it), and a runtime
// whose one setting holds host and port is told so once.
func TestTCPExplanationFollowsTheSignature(t *testing.T) {
	cause, fix := explainTCP(Mock, sigReset, "127.0.0.1:4242", true)
	contains(t, "reset cause", cause, "127.0.0.1:4242", "was cut as it was made", "proxy or firewall")
	contains(t, "reset fix", fix, "--repeat 200")
	if strings.Contains(cause, "nothing accepts") || strings.Contains(fix, "set ") {
		t.Errorf("a reset explained as a missing server:\ncause %q\nfix %q", cause, fix)
	}
	_, fix = explainTCP(Mock, sigRefused, "127.0.0.1:4242", true)
	contains(t, "mock fix", fix, "set --stream-addr (now 127.0.0.1:4242) in crisp mock-runtime's flags")
	_, fix = explainTCP(Containerd2, sigRefused, "10.0.0.5:4242", false)
	contains(t, "containerd fix", fix, "stream_server_address (now 10.0.0.5) and stream_server_port (now 4242)")
}
