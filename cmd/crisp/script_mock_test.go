package main

// The harness's `mock` command: a mock runtime per script, and its pods
// and containers.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

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
	_, _ = fmt.Fprintln(ts.Stdout(), id)
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
	_, _ = fmt.Fprintln(ts.Stdout(), resp.ContainerId)
}
