package main

// The end-to-end harness: testscript runs testdata/script/*.txtar with the
// crisp binary (this test binary re-executed as "crisp": write `exec crisp
// ...`) against a mock runtime each script starts for itself.
//
// Commands scripts can use besides testscript's own (exec, stdout, stderr,
// cmp, env, wait, kill, ...):
//
//	mock start [--profile P] [--fault F]... [--stream-addr A]
//	    [--tls-dir DIR [--tls-client-auth]]
//	    an in-process mock runtime on a short socket; sets
//	    CONTAINER_RUNTIME_ENDPOINT, MOCK_ENDPOINT, STREAM_ADDR; log in
//	    $WORK/mock.log; closed when the script ends
//	mock pod [--var V] [--namespace NS] [--label K=V]... NAME      sets $POD
//	mock container [--var V] [--pod ID] [--image I] [--tty] [--stdin]
//	    [--stdin-once] [--label K=V]... [--env K=V]... [--no-start]
//	    NAME [-- CMD...]                                           sets $CTR
//	mock stop-container|rm-container|stop-pod|rm-pod ID
//	mock stop-stream | mock start-stream | mock close
//	exitcode N PROG [ARGS...]       like exec, and the exit status must be N
//	sha256file [--var V] FILE       prints (or sets V to) the file's hex SHA-256
//	genfile [--seed N] FILE SIZE    deterministic pseudo-random bytes (64K, 64M)
//	waitfor [--timeout D] FILE REGEXP | waitfor [--timeout D] --port HOST:PORT
//	echoserver [--var V] [--addr A] TCP echo on loopback; sets $ECHO_PORT
//	tcpcopy [--timeout D] [--n N | --echo] ADDR IN OUT
//	    send IN, write what comes back to OUT (half-closes unless --n/--echo)
//	sharedprefix [--var V] FILE     shortest prefix two of FILE's IDs share
//
// Conditions: [ci] (CI=true), [root]. Every script gets an empty crictl
// config file (CRI_CONFIG_FILE) so the host's /etc/crictl.yaml stays out.
// Waits are bounded (scriptCallTimeout) and never measure anything.
// A background crisp writes where waitfor can see it with
// `exec sh -c 'exec crisp port-forward ... >pf.out 2>&1' &` (sh's exec, so
// signals reach crisp).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testkit"
)

// scriptCallTimeout bounds every CRI call the harness makes and is the
// default of waitfor and tcpcopy. It is a guard against hangs, never a
// measurement.
const scriptCallTimeout = 20 * time.Second

// TestMain lets this test binary act as the crisp command inside scripts and
// checks for leaked goroutines once every test (scripts included) is done,
// with a grace period: spdystream's Connection.Close holds a goroutine up to
// a second to report a close error (the mock's TLS connections give one when
// the client is already gone); bounded, not a leak.
func TestMain(m *testing.M) {
	testscript.Main(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace}, map[string]func(){
		"crisp": func() { os.Exit(Main(os.Args[1:], systemStreams())) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(filepath.Join("..", "..", "testdata", "script")))
}

// scriptParams is the harness configuration; other tests may run their own
// script folders with it.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Values[scriptStateKey{}] = &scriptState{}
			// Keep the host's /etc/crictl.yaml (and whatever runtime it
			// names) out of scripts: an empty config file of their own.
			cfg := filepath.Join(env.WorkDir, ".crictl.yaml")
			if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
				return err
			}
			env.Setenv("CRI_CONFIG_FILE", cfg)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "ci":
				return os.Getenv("CI") == "true", nil
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q (crisp's are ci and root)", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mock":         cmdMock,
			"sha256file":   cmdSha256File,
			"genfile":      cmdGenFile,
			"waitfor":      cmdWaitFor,
			"echoserver":   cmdEchoServer,
			"tcpcopy":      cmdTCPCopy,
			"exitcode":     cmdExitCode,
			"sharedprefix": cmdSharedPrefix,
			"varfrom":      cmdVarFrom, // portforward_test.go
			"freeport":     cmdFreePort,
		},
	}
}

type scriptStateKey struct{}

// scriptState is what one script's custom commands share.
type scriptState struct {
	mu sync.Mutex
	// env is the mock runtime and a CRI connection to it, once `mock start`
	// ran; nil again after `mock close`.
	env     *mocktest.Env
	podCfgs map[string]*runtimeapi.PodSandboxConfig
	log     *lockedFile
}

func state(ts *testscript.TestScript) *scriptState {
	return ts.Value(scriptStateKey{}).(*scriptState)
}

// lockedFile is the mock's log ($WORK/mock.log): its Logf runs on many
// goroutines, and may run after the script's last command.
type lockedFile struct {
	mu     sync.Mutex
	f      *os.File
	closed bool
}

func (l *lockedFile) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		fmt.Fprintf(l.f, format+"\n", args...)
	}
}

func (l *lockedFile) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		l.f.Close()
	}
}

const mockUsage = `usage:
  mock start [--profile P] [--fault F]... [--stream-addr A] [--tls-dir DIR [--tls-client-auth]]
      start a mock runtime on a short temporary socket; sets CONTAINER_RUNTIME_ENDPOINT,
      MOCK_ENDPOINT and STREAM_ADDR; its log goes to $WORK/mock.log; torn down with the script;
      --tls-dir serves https with ca.crt, client.crt and client.key written into DIR
  mock pod [--var V] [--namespace NS] [--label K=V]... NAME
      create a pod; prints its ID and sets $POD (or $V)
  mock container [--var V] [--pod ID] [--image I] [--tty] [--stdin] [--stdin-once]
                 [--label K=V]... [--env K=V]... [--no-start] NAME [-- CMD...]
      create and start a container in $POD (or --pod; a pod NAME-pod is made when neither);
      prints its ID and sets $CTR (or $V); the image is pulled when the mock lacks it
  mock stop-container ID | mock stop-pod ID | mock rm-container ID | mock rm-pod ID
  mock stop-stream | mock start-stream
      stop the streaming server (open streams die) / serve again on the same address
  mock close
      kill the whole mock runtime now (a runtime that dies mid-session)`

// cmdMock drives the script's mock runtime.
func cmdMock(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! mock")
	}
	if len(args) == 0 {
		ts.Fatalf("%s", mockUsage)
	}
	st := state(ts)
	sub, args := args[0], args[1:]
	if sub == "start" {
		mockStart(ts, st, args)
		return
	}
	env := st.current()
	if env == nil {
		ts.Fatalf("mock %s: no mock runtime running in this script; run `mock start` first", sub)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptCallTimeout)
	defer cancel()
	oneID := func() string {
		if len(args) != 1 {
			ts.Fatalf("mock %s takes one ID\n%s", sub, mockUsage)
		}
		return args[0]
	}
	switch sub {
	case "pod":
		mockPod(ctx, ts, st, env, args)
	case "container":
		mockContainer(ctx, ts, st, env, args)
	case "stop-container":
		_, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: oneID()})
		ts.Check(err)
	case "rm-container":
		_, err := env.CRI.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: oneID()})
		ts.Check(err)
	case "stop-pod":
		_, err := env.CRI.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: oneID()})
		ts.Check(err)
	case "rm-pod":
		_, err := env.CRI.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: oneID()})
		ts.Check(err)
	case "stop-stream", "start-stream":
		srv := env.Runtime.StreamServer()
		if srv == nil {
			ts.Fatalf("mock %s: the mock runtime has no streaming server", sub)
		}
		if sub == "stop-stream" {
			ts.Check(srv.Stop())
		} else {
			ts.Check(srv.Start())
		}
	case "close":
		st.closeRuntime()
	default:
		ts.Fatalf("mock: unknown subcommand %q\n%s", sub, mockUsage)
	}
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func parseFlags(ts *testscript.TestScript, fs *flag.FlagSet, args []string) []string {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		ts.Fatalf("%s: %v\n%s", fs.Name(), err, mockUsage)
	}
	return fs.Args()
}

func keyValues(ts *testscript.TestScript, pairs []string) map[string]string {
	if len(pairs) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			ts.Fatalf("%q: want KEY=VALUE", p)
		}
		m[k] = v
	}
	return m
}

func mockStart(ts *testscript.TestScript, st *scriptState, args []string) {
	fs := flag.NewFlagSet("mock start", flag.ContinueOnError)
	profile := fs.String("profile", string(streamserver.ProfileFull), "streaming profile")
	streamAddr := fs.String("stream-addr", "", "streaming server address")
	var faults multiFlag
	fs.Var(&faults, "fault", "fault to inject (repeatable)")
	tlsDir := fs.String("tls-dir", "", "serve streaming over https with TLS material generated into this folder (tls_test.go)")
	tlsClientAuth := fs.Bool("tls-client-auth", false, "with --tls-dir: require the client certificate")
	if rest := parseFlags(ts, fs, args); len(rest) > 0 {
		ts.Fatalf("mock start takes no arguments, got %q\n%s", rest, mockUsage)
	}
	if st.log != nil {
		ts.Fatalf("mock start: this script already started a mock runtime")
	}
	cfg := mockruntime.Config{Profile: streamserver.Profile(*profile), StreamAddr: *streamAddr}
	for _, f := range faults {
		fault, err := streamserver.ParseFault(f)
		if err != nil {
			ts.Fatalf("mock start --fault %s: %v", f, err)
		}
		cfg.Faults = append(cfg.Faults, fault)
	}
	cfg.StreamTLS = mockTLS(ts, *tlsDir, *tlsClientAuth)
	logFile, err := os.Create(ts.MkAbs("mock.log"))
	ts.Check(err)
	st.log = &lockedFile{f: logFile}
	cfg.Logf = st.log.Logf

	ctx, cancel := context.WithTimeout(context.Background(), scriptCallTimeout)
	defer cancel()
	// mocktest puts the socket under a short temporary folder: unix socket
	// paths are limited to 108 bytes and $WORK can be longer.
	env, err := mocktest.StartRuntime(ctx, cfg)
	if err != nil {
		st.log.Close()
		ts.Fatalf("mock start: %v", err)
	}
	st.mu.Lock()
	st.env = env
	st.podCfgs = map[string]*runtimeapi.PodSandboxConfig{}
	st.mu.Unlock()
	// The runtime goes first, then the log it writes to.
	ts.Defer(func() {
		st.closeRuntime()
		st.log.Close()
	})
	ts.Setenv("CONTAINER_RUNTIME_ENDPOINT", env.Endpoint)
	ts.Setenv("MOCK_ENDPOINT", env.Endpoint)
	if srv := env.Runtime.StreamServer(); srv != nil {
		ts.Setenv("STREAM_ADDR", srv.Addr())
	}
}

func (st *scriptState) current() *mocktest.Env {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.env
}

// closeRuntime closes the CRI connection and the runtime, once.
func (st *scriptState) closeRuntime() {
	st.mu.Lock()
	env := st.env
	st.env = nil
	st.mu.Unlock()
	if env != nil {
		if err := env.Close(); err != nil {
			st.log.Logf("harness: closing the mock runtime: %v", err)
		}
	}
}

func mockPod(ctx context.Context, ts *testscript.TestScript, st *scriptState, env *mocktest.Env, args []string) {
	fs := flag.NewFlagSet("mock pod", flag.ContinueOnError)
	varName := fs.String("var", "POD", "environment variable to set to the pod ID")
	namespace := fs.String("namespace", "default", "pod namespace")
	var labels multiFlag
	fs.Var(&labels, "label", "K=V label (repeatable)")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 1 {
		ts.Fatalf("mock pod needs one NAME\n%s", mockUsage)
	}
	id := st.runPod(ctx, ts, env, rest[0], *namespace, keyValues(ts, labels))
	ts.Setenv(*varName, id)
	fmt.Fprintln(ts.Stdout(), id)
}

// runPod makes a pod the way mocktest.CreatePod does (logs under the
// environment's folder), with the namespace and labels a script asks for.
func (st *scriptState) runPod(ctx context.Context, ts *testscript.TestScript, env *mocktest.Env, name, namespace string, labels map[string]string) string {
	uid := namespace + "-" + name
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Hostname:     name,
		LogDirectory: filepath.Join(env.Dir, "pods", uid),
		Labels:       labels,
	}
	resp, err := env.CRI.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		ts.Fatalf("mock pod %s: RunPodSandbox: %v", name, err)
	}
	st.mu.Lock()
	st.podCfgs[resp.PodSandboxId] = cfg
	st.mu.Unlock()
	return resp.PodSandboxId
}

func mockContainer(ctx context.Context, ts *testscript.TestScript, st *scriptState, env *mocktest.Env, args []string) {
	fs := flag.NewFlagSet("mock container", flag.ContinueOnError)
	varName := fs.String("var", "CTR", "environment variable to set to the container ID")
	podID := fs.String("pod", "", "pod ID (default $POD)")
	image := fs.String("image", mockruntime.DefaultImage, "image")
	tty := fs.Bool("tty", false, "allocate a terminal")
	stdin := fs.Bool("stdin", false, "keep stdin open")
	stdinOnce := fs.Bool("stdin-once", false, "close stdin when the first attached client ends its input")
	noStart := fs.Bool("no-start", false, "create only (state Created)")
	var labels, envs multiFlag
	fs.Var(&labels, "label", "K=V label (repeatable)")
	fs.Var(&envs, "env", "K=V environment variable (repeatable)")
	rest := parseFlags(ts, fs, args)
	if len(rest) == 0 {
		ts.Fatalf("mock container needs a NAME\n%s", mockUsage)
	}
	name, command := rest[0], rest[1:]
	if len(command) > 0 && command[0] == "--" {
		command = command[1:]
	}
	pod := *podID
	if pod == "" {
		pod = ts.Getenv("POD")
	}
	if pod == "" {
		pod = st.runPod(ctx, ts, env, name+"-pod", "default", nil)
		ts.Setenv("POD", pod)
	}
	st.mu.Lock()
	podCfg := st.podCfgs[pod]
	st.mu.Unlock()
	if podCfg == nil {
		ts.Fatalf("mock container %s: pod %q was not made by `mock pod` in this script", name, pod)
	}
	// Pull what the mock does not hold yet, as a kubelet would.
	spec := &runtimeapi.ImageSpec{Image: *image}
	is, err := env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		ts.Fatalf("mock container %s: ImageStatus %s: %v", name, *image, err)
	}
	if is.Image == nil {
		if _, err := env.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: podCfg}); err != nil {
			ts.Fatalf("mock container %s: PullImage %s: %v", name, *image, err)
		}
	}
	envVars := keyValues(ts, envs)
	keys := make([]string, 0, len(envVars))
	for k := range envVars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cfg := &runtimeapi.ContainerConfig{
		Metadata:  &runtimeapi.ContainerMetadata{Name: name},
		Image:     spec,
		Command:   command,
		Labels:    keyValues(ts, labels),
		Tty:       *tty,
		Stdin:     *stdin || *stdinOnce,
		StdinOnce: *stdinOnce,
		LogPath:   name + ".log",
	}
	for _, k := range keys {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(envVars[k])})
	}
	resp, err := env.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: pod, Config: cfg, SandboxConfig: podCfg})
	if err != nil {
		ts.Fatalf("mock container %s: CreateContainer: %v", name, err)
	}
	if !*noStart {
		if _, err := env.CRI.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: resp.ContainerId}); err != nil {
			ts.Fatalf("mock container %s: StartContainer: %v", name, err)
		}
	}
	ts.Setenv(*varName, resp.ContainerId)
	fmt.Fprintln(ts.Stdout(), resp.ContainerId)
}

// cmdSha256File prints the hex SHA-256 of a file, or sets a variable to it:
// sha256file [--var V] FILE.
func cmdSha256File(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sha256file")
	}
	fs := flag.NewFlagSet("sha256file", flag.ContinueOnError)
	varName := fs.String("var", "", "environment variable to set instead of printing")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 1 {
		ts.Fatalf("usage: sha256file [--var V] FILE")
	}
	f, err := os.Open(ts.MkAbs(rest[0]))
	ts.Check(err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	ts.Check(err)
	sum := hex.EncodeToString(h.Sum(nil))
	if *varName != "" {
		ts.Setenv(*varName, sum)
		return
	}
	fmt.Fprintln(ts.Stdout(), sum)
}

// cmdGenFile writes SIZE pseudo-random bytes (same seed, same bytes):
// genfile [--seed N] FILE SIZE, SIZE like 1024, 64K, 64M.
func cmdGenFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! genfile")
	}
	fs := flag.NewFlagSet("genfile", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "random seed")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 2 {
		ts.Fatalf("usage: genfile [--seed N] FILE SIZE")
	}
	size, err := parseSize(rest[1])
	if err != nil {
		ts.Fatalf("genfile: %v", err)
	}
	f, err := os.Create(ts.MkAbs(rest[0]))
	ts.Check(err)
	rng := rand.NewChaCha8([32]byte{byte(*seed), byte(*seed >> 8), byte(*seed >> 16), byte(*seed >> 24)})
	_, err = io.CopyN(f, rng, size)
	ts.Check(err)
	ts.Check(f.Close())
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a byte count like 1024, 64K or 64M", s)
	}
	return n * mult, nil
}

// cmdWaitFor waits, within a bounded time, until a file matches a regular
// expression or a TCP address accepts connections:
//
//	waitfor [--timeout D] FILE REGEXP
//	waitfor [--timeout D] --port HOST:PORT
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! waitfor")
	}
	fs := flag.NewFlagSet("waitfor", flag.ContinueOnError)
	timeout := fs.Duration("timeout", scriptCallTimeout, "how long to wait")
	port := fs.String("port", "", "HOST:PORT to wait for")
	rest := parseFlags(ts, fs, args)
	var check func() (bool, string)
	switch {
	case *port != "" && len(rest) == 0:
		check = func() (bool, string) {
			conn, err := net.DialTimeout("tcp", *port, time.Second)
			if err != nil {
				return false, err.Error()
			}
			conn.Close()
			return true, ""
		}
	case *port == "" && len(rest) == 2:
		// Multi-line, like testscript's stdout and grep: ^ and $ match at
		// line boundaries.
		re, err := regexp.Compile("(?m)" + rest[1])
		if err != nil {
			ts.Fatalf("waitfor: %v", err)
		}
		path := ts.MkAbs(rest[0])
		check = func() (bool, string) {
			data, err := os.ReadFile(path)
			if err != nil {
				return false, err.Error()
			}
			return re.Match(data), fmt.Sprintf("%s holds:\n%s", rest[0], data)
		}
	default:
		ts.Fatalf("usage: waitfor [--timeout D] FILE REGEXP | waitfor [--timeout D] --port HOST:PORT")
	}
	var last string
	if !testkit.Poll(*timeout, func() (ok bool) { ok, last = check(); return ok }) {
		ts.Fatalf("waitfor %s: not there after %s; %s", strings.Join(args, " "), *timeout, last)
	}
}

// cmdEchoServer starts a TCP echo server on loopback for the rest of the
// script (mock pods share the host's loopback, so port-forward reaches it):
// echoserver [--var V] [--addr A]. $ECHO_PORT (or $V) is its port.
// Each connection echoes until the client half-closes or closes.
func cmdEchoServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! echoserver")
	}
	fs := flag.NewFlagSet("echoserver", flag.ContinueOnError)
	varName := fs.String("var", "ECHO_PORT", "environment variable to set to the port")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if rest := parseFlags(ts, fs, args); len(rest) != 0 {
		ts.Fatalf("usage: echoserver [--var V] [--addr A]")
	}
	lis, err := net.Listen("tcp", *addr)
	ts.Check(err)
	ts.Defer(testkit.ServeEcho(lis))
	ts.Setenv(*varName, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port))
}

// cmdFreePort sets $FREE_PORT (or $V) to a loopback TCP port that was free
// a moment ago, for servers a script starts inside a container:
// freeport [--var V].
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! freeport")
	}
	fs := flag.NewFlagSet("freeport", flag.ContinueOnError)
	varName := fs.String("var", "FREE_PORT", "environment variable to set to the port")
	if rest := parseFlags(ts, fs, args); len(rest) != 0 {
		ts.Fatalf("usage: freeport [--var V]")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(*varName, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port))
	ts.Check(lis.Close())
}

// cmdTCPCopy connects to ADDR, sends IN, and writes what comes back to OUT:
// tcpcopy [--timeout D] [--n N] [--echo] ADDR IN OUT. By default it
// half-closes after sending and reads until EOF; --n N (or --echo: the size
// of IN) reads that many bytes and closes, for protocols that cannot carry a
// half-close.
func cmdTCPCopy(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("tcpcopy", flag.ContinueOnError)
	timeout := fs.Duration("timeout", scriptCallTimeout, "bound on the whole exchange")
	n := fs.Int64("n", -1, "bytes to read back (-1: until EOF)")
	echo := fs.Bool("echo", false, "read back as many bytes as were sent")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 3 {
		ts.Fatalf("usage: tcpcopy [--timeout D] [--n N] [--echo] ADDR IN OUT")
	}
	err := tcpCopy(rest[0], ts.MkAbs(rest[1]), ts.MkAbs(rest[2]), *timeout, *n, *echo)
	if neg {
		if err == nil {
			ts.Fatalf("tcpcopy %s succeeded unexpectedly", rest[0])
		}
		return
	}
	if err != nil {
		ts.Fatalf("tcpcopy: %v", err)
	}
}

func tcpCopy(addr, inPath, outPath string, timeout time.Duration, n int64, echo bool) error {
	in, err := os.ReadFile(inPath)
	if err != nil {
		return err
	}
	if echo {
		n = int64(len(in))
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	sendErr := make(chan error, 1)
	go func() {
		_, err := conn.Write(in)
		if err == nil && n < 0 {
			err = conn.(*net.TCPConn).CloseWrite()
		}
		sendErr <- err
	}()
	var out bytes.Buffer
	var r io.Reader = conn
	if n >= 0 {
		r = io.LimitReader(conn, n)
	}
	_, readErr := io.Copy(&out, r)
	if n >= 0 && int64(out.Len()) < n && readErr == nil {
		readErr = fmt.Errorf("connection closed after %d of %d bytes", out.Len(), n)
	}
	conn.Close() // unblocks a Write the peer stopped reading
	if err := <-sendErr; err != nil && readErr == nil && !errors.Is(err, net.ErrClosed) {
		readErr = fmt.Errorf("sending %s: %w", inPath, err)
	}
	if werr := os.WriteFile(outPath, out.Bytes(), 0o644); werr != nil && readErr == nil {
		readErr = werr
	}
	return readErr
}

// cmdExitCode runs a program like exec and checks its exit status exactly:
// exitcode N PROG [ARGS...]. stdout and stderr are kept for the next checks.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode (say the code you expect)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdSharedPrefix reads IDs, one a line, and sets $PREFIX (or --var) to the
// shortest prefix that two or more of them share, for ambiguity tests:
// sharedprefix [--var V] FILE.
func cmdSharedPrefix(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sharedprefix")
	}
	fs := flag.NewFlagSet("sharedprefix", flag.ContinueOnError)
	varName := fs.String("var", "PREFIX", "environment variable to set")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 1 {
		ts.Fatalf("usage: sharedprefix [--var V] FILE")
	}
	ids := strings.Fields(ts.ReadFile(rest[0]))
	for n := 1; ; n++ {
		seen := map[string]bool{}
		longer := false
		for _, id := range ids {
			if len(id) < n {
				continue
			}
			longer = true
			if seen[id[:n]] {
				ts.Setenv(*varName, id[:n])
				return
			}
			seen[id[:n]] = true
		}
		if !longer {
			ts.Fatalf("sharedprefix: no two of the %d IDs in %s share a prefix", len(ids), rest[0])
		}
	}
}

// TestHarnessCommands runs the helper commands on their own, so a script
// failure points at crisp, not at the harness.
func TestHarnessCommands(t *testing.T) {
	dir := t.TempDir()
	script := `
genfile in.bin 256K
genfile --seed 1 same.bin 256K
genfile --seed 2 other.bin 256K
sha256file in.bin
cp stdout in.sum
sha256file same.bin
cmp stdout in.sum
sha256file --var OTHER other.bin
exec sh -c 'test "$OTHER" != "$(cat in.sum)"'

echoserver
waitfor --port 127.0.0.1:$ECHO_PORT
tcpcopy 127.0.0.1:$ECHO_PORT in.bin out.bin
cmp in.bin out.bin
tcpcopy --echo 127.0.0.1:$ECHO_PORT in.bin echo.bin
cmp in.bin echo.bin
echoserver --var SECOND
tcpcopy --n 10 127.0.0.1:$SECOND in.bin ten.bin
exec wc -c ten.bin
stdout '^10 '

exec sh -c 'sleep 0.2; echo ready > late.txt' &
waitfor late.txt '^ready$'
wait
! exec sh -c 'exit 3'
exitcode 3 sh -c 'echo out; exit 3'
stdout '^out$'
exitcode 0 true

sharedprefix ids.txt
exec sh -c 'test "$PREFIX" = a'
sharedprefix --var P2 ids2.txt
exec sh -c 'test "$P2" = f'

-- ids.txt --
abc1
abd2
xyz3
-- ids2.txt --
f1
f2
`
	if err := os.WriteFile(filepath.Join(dir, "harness.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, scriptParams(dir))
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "64K": 64 << 10, "64M": 64 << 20, "1G": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "K", "-1", "1T", "one"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) succeeded", bad)
		}
	}
}
