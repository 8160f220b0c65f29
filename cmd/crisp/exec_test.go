package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	utilexec "k8s.io/client-go/util/exec"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/transport"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// fakeRuntime is clienttest's fake CRI runtime, served, holding copies of
// the given containers. It is named containerd: attach asks when a stream
// ended after its input, and containerd's streams do not end with the
// client's stdin.
type fakeRuntime struct {
	*clienttest.Fake
	endpoint string
}

func newFakeRuntime(t *testing.T, containers ...*runtimeapi.Container) *fakeRuntime {
	t.Helper()
	f := &clienttest.Fake{RuntimeName: "containerd", StreamBase: "http://127.0.0.1:1"}
	for _, c := range containers {
		f.AddContainer(proto.Clone(c).(*runtimeapi.Container))
	}
	return &fakeRuntime{Fake: f, endpoint: clienttest.Serve(t, f)}
}

// execs, attaches and syncs are the requests of those calls, in order.
func (r *fakeRuntime) execs() []*runtimeapi.ExecRequest {
	return requestsOf[*runtimeapi.ExecRequest](r, "Exec")
}
func (r *fakeRuntime) attaches() []*runtimeapi.AttachRequest {
	return requestsOf[*runtimeapi.AttachRequest](r, "Attach")
}
func (r *fakeRuntime) syncs() []*runtimeapi.ExecSyncRequest {
	return requestsOf[*runtimeapi.ExecSyncRequest](r, "ExecSync")
}

func requestsOf[T proto.Message](r *fakeRuntime, method string) []T {
	var out []T
	for _, req := range r.Requests(method) {
		out = append(out, req.(T))
	}
	return out
}

// fakeStreamer stands in for remotecommand.Stream: it gets as many URLs as
// there are offers, records the session, and returns err.
type fakeStreamer struct {
	err   error
	read  bool // read stdin to its end (or until the context ends)
	urls  []string
	op    string
	s     remotecommand.Streams
	stdin []byte
	off   []transport.Offer
}

func (f *fakeStreamer) stream(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, _ transport.Config, s remotecommand.Streams) (remotecommand.Result, error) {
	f.op, f.s, f.off = op, s, offers
	for range offers {
		u, err := src(ctx)
		if err != nil {
			return remotecommand.Result{}, err
		}
		f.urls = append(f.urls, u)
	}
	if s.Stdout != nil {
		_, _ = io.WriteString(s.Stdout, "remote output\n")
	}
	if f.read && s.Stdin != nil {
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(s.Stdin)
			got <- b
		}()
		select {
		case f.stdin = <-got:
		case <-ctx.Done():
			return remotecommand.Result{}, ctx.Err()
		}
	}
	return remotecommand.Result{}, f.err
}

var fakeContainer = &runtimeapi.Container{
	Id:       "0123456789abcdef0123",
	Metadata: &runtimeapi.ContainerMetadata{Name: "web"},
	State:    runtimeapi.ContainerState_CONTAINER_RUNNING,
}

// fakeDeps wires a fake runtime and streamer into exec/attach, with
// buffers as the streams.
func fakeDeps(rt *fakeRuntime, st *fakeStreamer, in string, terminal bool) (streamDeps, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return streamDeps{
		Streams: cmdutil.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return terminal }},
		Settings: func() (client.Settings, error) {
			return client.Settings{RuntimeEndpoint: rt.endpoint, RequestTimeout: 10 * time.Second}, nil
		},
		Dial:   client.Dial,
		Stream: st.stream,
	}, &out, &errOut
}

// runExec runs `exec args...` with deps and returns the exit status Main
// would use.
func runExec(t *testing.T, deps streamDeps, args ...string) (*execOptions, int, error) {
	t.Helper()
	o := &execOptions{deps: deps}
	cmd := execCommand(&cmdutil.Factory{Streams: deps.Streams}, o)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	return o, cmdutil.ExitStatus(err, true), err
}

func TestExecFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantCmd []string
		wantErr string
	}{
		{[]string{"web", "--", "sh", "-c", "exit 7"}, []string{"sh", "-c", "exit 7"}, ""},
		{[]string{"web", "sh", "-c", "echo -n hi"}, []string{"sh", "-c", "echo -n hi"}, ""},
		{[]string{"-i", "-t", "web", "ls", "-l"}, []string{"ls", "-l"}, ""},
		{[]string{"--protocol", "v2", "web", "true"}, []string{"true"}, ""},
		{[]string{"web"}, nil, "needs a command"},
		{[]string{}, nil, "needs a CONTAINER"},
		{[]string{"-s", "-i", "web", "cat"}, nil, "-s (ExecSync) carries no stdin"},
		{[]string{"--timeout", "5s", "web", "ls"}, nil, "use it with -s"},
		{[]string{"-s", "--transport", "spdy", "web", "ls"}, nil, "ExecSync call, which has none"},
		{[]string{"--transport", "pigeon", "web", "ls"}, nil, "unknown transport"},
		{[]string{"--transport", "websocket", "--protocol", "v3", "web", "ls"}, nil, "carries only"},
		{[]string{"--tls-cert", "c.pem", "web", "ls"}, nil, "go together"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			rt := newFakeRuntime(t, fakeContainer)
			deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
			o, code, err := runExec(t, deps, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if code != cmdutil.ExitCrispFailure || !cmdutil.IsUsage(err) {
					t.Errorf("exit %d usage %v, want 125 and a usage error", code, cmdutil.IsUsage(err))
				}
				if len(rt.execs())+len(rt.syncs()) > 0 {
					t.Errorf("a bad command line reached the runtime")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantCmd, o.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecRunFreshURLPerOfferAndExitCode(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)
	st := &fakeStreamer{err: utilexec.CodeExitError{Err: errors.New("command terminated with exit code 7"), Code: 7}}
	deps, out, errOut := fakeDeps(rt, st, "", false)
	_, code, err := runExec(t, deps, "web", "--", "sh", "-c", "exit 7")
	if code != 7 || !errors.Is(err, cmdutil.ErrReported) {
		t.Errorf("exit %d (err %v), want 7 and no line of crisp's own", code, err)
	}
	if len(rt.execs()) != 3 || len(st.urls) != 3 || st.urls[0] == st.urls[1] {
		t.Errorf("Exec calls %d, URLs %q: want one fresh URL per offer (3 with auto)", len(rt.execs()), st.urls)
	}
	want := &runtimeapi.ExecRequest{ContainerId: fakeContainer.Id, Cmd: []string{"sh", "-c", "exit 7"}, Stdout: true, Stderr: true}
	if diff := cmp.Diff(want, rt.execs()[0], cmp.Comparer(func(a, b *runtimeapi.ExecRequest) bool { return a.String() == b.String() })); diff != "" {
		t.Errorf("ExecRequest (-want +got):\n%s", diff)
	}
	if st.s.Stdin != nil || st.s.TTY {
		t.Errorf("streams %+v: no stdin, no TTY wanted", st.s)
	}
	if out.String() != "remote output\n" || errOut.Len() != 0 {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
}

func TestExecRunCrispFailure(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)
	st := &fakeStreamer{err: &transport.NegotiationError{Op: "exec"}}
	deps, _, _ := fakeDeps(rt, st, "", false)
	if _, code, _ := runExec(t, deps, "web", "true"); code != cmdutil.ExitCrispFailure {
		t.Errorf("refused upgrade: exit %d, want 125", code)
	}
	deps, _, _ = fakeDeps(rt, &fakeStreamer{}, "", false)
	_, code, err := runExec(t, deps, "nosuch", "true")
	var nf *client.NotFoundError
	if code != cmdutil.ExitCrispFailure || !errors.As(err, &nf) {
		t.Errorf("unknown container: exit %d err %v, want 125 and NotFoundError", code, err)
	}
}

func TestExecRunTTY(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)

	// -t without a terminal: a warning, then no TTY (kubectl's behaviour).
	st := &fakeStreamer{read: true}
	deps, _, errOut := fakeDeps(rt, st, "typed", false)
	if _, code, err := runExec(t, deps, "-it", "web", "sh"); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if !strings.Contains(errOut.String(), "Unable to use a TTY") || st.s.TTY || rt.execs()[0].Tty || !rt.execs()[0].Stderr {
		t.Errorf("stderr %q, streams %+v, request %v: want a warning and no TTY", errOut, st.s, rt.execs()[0])
	}
	if string(st.stdin) != "typed" {
		t.Errorf("stdin reached the session as %q", st.stdin)
	}

	// With a terminal (as far as the streams say): a TTY, no stderr.
	st = &fakeStreamer{read: true}
	rt = newFakeRuntime(t, fakeContainer)
	deps, _, errOut = fakeDeps(rt, st, "typed", true)
	if _, code, err := runExec(t, deps, "-it", "web", "sh"); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if errOut.Len() != 0 || !st.s.TTY || st.s.Stderr != nil || !rt.execs()[0].Tty || rt.execs()[0].Stderr || !rt.execs()[0].Stdin {
		t.Errorf("stderr %q, streams %+v, request %v: want a TTY session", errOut, st.s, rt.execs()[0])
	}
}

func TestExecSync(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)
	rt.ExecSyncResponse = &runtimeapi.ExecSyncResponse{Stdout: []byte("out\n"), Stderr: []byte("err\n"), ExitCode: 3}
	deps, out, errOut := fakeDeps(rt, &fakeStreamer{}, "", false)
	_, code, err := runExec(t, deps, "-s", "--timeout", "1500ms", "web", "--", "sh", "-c", "x")
	if code != 3 || !errors.Is(err, cmdutil.ErrReported) {
		t.Errorf("exit %d err %v, want 3 passed through silently", code, err)
	}
	if out.String() != "out\n" || errOut.String() != "err\n" {
		t.Errorf("stdout %q stderr %q: each stream goes to its own", out, errOut)
	}
	if syncs := rt.syncs(); len(syncs) != 1 || syncs[0].Timeout != 2 || syncs[0].ContainerId != fakeContainer.Id {
		t.Errorf("ExecSync requests %v: want one, timeout rounded up to 2s", syncs)
	}
}

func TestExecV1TextExitShown(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)
	st := &fakeStreamer{err: &transport.ExitError{Code: 1, Message: "command terminated: oops"}}
	deps, _, errOut := fakeDeps(rt, st, "", false)
	if _, code, _ := runExec(t, deps, "web", "true"); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "command terminated: oops") {
		t.Errorf("stderr %q: the v1-v3 error text must be shown", errOut)
	}
}

// benchEnv starts a mock runtime with a long-running container for the
// benchmarks and returns the crisp command to run and the container.
func benchEnv(b *testing.B) (string, string, string) {
	b.Helper()
	crisp := scriptCrisp.Path(b)
	env := mocktest.Start(b, mockruntime.Config{})
	ctr := env.RunContainer(b, env.RunPod(b, "bench"), mocktest.ContainerSpec{Name: "bench", Command: []string{"sleep", "3600"}})
	return crisp, env.Endpoint, ctr
}

// BenchmarkExecTrue is `crisp exec C true` end to end: process start, CRI
// calls, negotiation, the remote command, exit.
func BenchmarkExecTrue(b *testing.B) {
	crisp, ep, ctr := benchEnv(b)
	for _, transport := range []string{"auto", "spdy", "websocket"} {
		b.Run(transport, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(crisp, "-r", ep, "exec", "--transport", transport, ctr, "true")
				cmd.Env = append(os.Environ(), "CRI_CONFIG_FILE=/dev/null")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}

// BenchmarkExecStdout is exec stdout throughput: 64 MiB from the remote
// process to crisp's stdout (/dev/null).
func BenchmarkExecStdout(b *testing.B) {
	crisp, ep, ctr := benchEnv(b)
	const size = 64 << 20
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = devNull.Close() }()
	for _, transport := range []string{"auto", "spdy"} {
		b.Run(transport, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				cmd := exec.Command(crisp, "-r", ep, "exec", "--transport", transport, ctr, "head", "-c", strconv.Itoa(size), "/dev/zero")
				cmd.Env = append(os.Environ(), "CRI_CONFIG_FILE=/dev/null")
				cmd.Stdout = devNull
				var errOut bytes.Buffer
				cmd.Stderr = &errOut
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v: %s", err, errOut.Bytes())
				}
			}
		})
	}
}
