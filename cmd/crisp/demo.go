package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/tty"

	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// The demo's pod and container, and the commands it runs in them.
const (
	demoPodName       = "demo-pod"
	demoContainerName = "demo"
	// demoTicker is the container's main process: a line every 0.2 s for
	// attach to show (the host's sleep and busybox's both take fractions;
	// `sleep 1` is the fallback for one that does not).
	demoTicker = `i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.2 2>/dev/null || sleep 1; done`
	// demoExitCommand prints a line and exits 3, which exec passes through.
	demoExitCommand = "echo hello from the container; exit 3"
	demoExitCode    = 3
	// demoTTYRows and demoTTYCols are the fixed size of step 4's terminal;
	// not 24x80, which busybox's stty reports for a terminal of no size.
	demoTTYRows = 40
	demoTTYCols = 120
	// demoPayload is what the port-forward step sends through the tunnel.
	demoPayload = "hello through the port-forward\n"
)

// demoOptions are `crisp demo`'s flags.
type demoOptions struct {
	f       *factory
	Profile string

	// stepTimeout bounds each step, so a broken runtime fails the demo
	// instead of hanging it; probeTimeout bounds the probe matrix.
	stepTimeout  time.Duration
	probeTimeout time.Duration
}

func newDemoCommand(f *factory) *cobra.Command {
	o := &demoOptions{stepTimeout: 15 * time.Second, probeTimeout: 30 * time.Second}
	profiles := make([]string, len(streamserver.Profiles))
	for i, p := range streamserver.Profiles {
		profiles[i] = string(p)
	}
	cmd := &cobra.Command{
		Use:   "demo [--profile P]",
		Short: "Start a mock runtime in-process and show probe, exec, attach and port-forward on it",
		Long: `Start crisp's mock CRI runtime in this process on a temporary socket, create a pod
and a container in it, and run the real crisp commands against it, each step titled
and shown with the command line it runs:

  1. probe: which streaming protocols the runtime speaks, and how well
  2. exec: the remote command's exit code passed through
  3. exec -i: the end of stdin reaching the remote command
  4. exec -t: the terminal's size reaching the remote TTY
  5. attach: the container's output, then detach
  6. port-forward: bytes through a forwarded port and back

It ends with the commands to try the same by hand against a mock runtime of your
own. Everything the demo started (containers, the runtime, its socket) is removed
on every way out, Ctrl-C included. No container runtime, root or network needed.

--profile picks the protocols the mock speaks (full, cri-streaming, conmon-rs,
legacy), as for crisp mock-runtime.

EXIT STATUS
  0    every step worked
  1    a step failed (the output says which) or the mock could not start
  2    bad flags or arguments
  130  interrupted`,
		Example: `  crisp demo
  crisp demo --profile cri-streaming
  make demo`,
		Args: noArgs,
		RunE: runOptions(f, o),
	}
	cmd.Flags().StringVar(&o.Profile, "profile", string(streamserver.ProfileFull), "streaming protocol profile of the mock: "+strings.Join(profiles, ", "))
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(profiles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete normalises the profile name.
func (o *demoOptions) Complete(f *factory, _ *cobra.Command, _ []string) error {
	o.f = f
	o.Profile = strings.ToLower(strings.TrimSpace(o.Profile))
	return nil
}

// Validate rejects an unknown profile before anything starts.
func (o *demoOptions) Validate() error {
	if !slices.Contains(streamserver.Profiles, streamserver.Profile(o.Profile)) {
		return usageErrorf("--profile must be one of full, cri-streaming, conmon-rs, legacy; got %q", o.Profile)
	}
	return nil
}

// demoRun is one run of the demo: the mock, the pod and container in it,
// and the transcript every step writes to.
type demoRun struct {
	out *demoWriter

	dir        string // temporary folder: socket and an empty crictl config
	configFile string
	endpoint   string
	cli        *client.Client
	podID      string
	ctrID      string
	echoPort   int
	// signalled is set when a command the demo ran caught SIGINT, SIGTERM
	// or SIGHUP (exec's terminal guard catches them too), possibly a moment
	// before ctx says so.
	signalled atomic.Bool
}

// Run starts the mock, runs every step and tears everything down, whatever
// happens (Main cancels ctx on SIGINT, SIGTERM and SIGHUP).
func (o *demoOptions) Run(ctx context.Context) (err error) {
	d := &demoRun{out: &demoWriter{w: o.f.Streams.Out}}
	start := time.Now()

	// A short folder: unix socket paths are limited to 108 bytes.
	d.dir, err = os.MkdirTemp("", "crisp")
	if err != nil {
		return fmt.Errorf("demo: create a temporary folder: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(d.dir); rmErr != nil && err == nil {
			err = fmt.Errorf("demo: remove %s: %w", d.dir, rmErr)
		}
	}()
	// The commands the demo runs read this empty config instead of the
	// host's /etc/crictl.yaml or CRI_CONFIG_FILE, whose keys (timeouts, TLS)
	// are meant for another runtime.
	d.configFile = filepath.Join(d.dir, "crictl.yaml")
	if err := os.WriteFile(d.configFile, []byte("{}\n"), 0o600); err != nil {
		return fmt.Errorf("demo: write %s: %w", d.configFile, err)
	}

	errOut := &demoWriter{w: o.f.Streams.ErrOut}
	rt, err := mockruntime.Start(ctx, mockruntime.Config{
		Listen:  "unix://" + filepath.Join(d.dir, "cri.sock"),
		Profile: streamserver.Profile(o.Profile),
		Logf: func(format string, args ...any) {
			errOut.printf("crisp demo: mock runtime: "+format+"\n", args...)
		},
	})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer func() {
		if closeErr := rt.Close(); closeErr != nil && err == nil {
			err = fmt.Errorf("demo: %w", closeErr)
		}
	}()
	d.endpoint = rt.Endpoint()

	// The server "in the pod" for port-forward: the mock's pods share the
	// host loopback, so a server on 127.0.0.1 is what a process in the pod
	// listening there would be. The demo serves a TCP echo itself, on a free
	// port: the mock's web-server images listen on fixed ports (80 needs root,
	// 12003 may be taken), and a container running a server of its own needs
	// busybox's nc, which may not be installed.
	echo, err := startDemoEchoServer()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer echo.close()
	d.echoPort = echo.port()

	d.cli, err = client.Dial(client.Settings{RuntimeEndpoint: d.endpoint, ImageEndpoint: d.endpoint, RequestTimeout: client.DefaultRequestTimeout})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer d.cli.Close()

	d.out.printf("crisp demo: a mock CRI runtime in this process (profile %s), CRI on %s, streaming on %s\n",
		o.Profile, d.endpoint, rt.StreamServer().Addr())
	if err := d.setUp(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("demo: interrupted while setting up: %w", ctx.Err())
		}
		return fmt.Errorf("demo: setting up the pod and container: %w", err)
	}

	steps := []struct {
		title   string
		timeout time.Duration
		run     func(context.Context) (string, error)
	}{
		{"probe: which streaming protocols the runtime speaks, and how well", o.probeTimeout, d.stepProbe},
		{"exec: the remote command's exit code passes through", o.stepTimeout, d.stepExitCode},
		{"exec -i: the end of stdin reaches the remote command", o.stepTimeout, d.stepStdinEOF},
		{"exec -t: the terminal's size reaches the remote TTY", o.stepTimeout, d.stepTTYSize},
		{"attach: the container's output, then detach", o.stepTimeout, d.stepAttach},
		{"port-forward: bytes through a forwarded port and back", o.stepTimeout, d.stepPortForward},
	}
	var failed []string
	skipped := 0
	for i, s := range steps {
		d.out.printf("\n=== Step %d/%d: %s\n", i+1, len(steps), s.title)
		stepCtx, cancel := context.WithTimeout(ctx, s.timeout)
		verdict, err := s.run(stepCtx)
		cancel()
		if ctx.Err() != nil || d.signalled.Load() {
			d.out.printf("\ncrisp demo: interrupted during step %d; tearing down\n", i+1)
			return fmt.Errorf("demo: interrupted during step %d (%s): %w", i+1, s.title, context.Canceled)
		}
		var skip demoStepSkipped
		if errors.As(err, &skip) {
			d.out.printf("skipped: %s\n", skip.why)
			skipped++
			continue
		}
		if err != nil {
			d.out.printf("FAILED: step %d (%s): %v\n", i+1, s.title, err)
			failed = append(failed, fmt.Sprintf("%d (%s)", i+1, strings.SplitN(s.title, ":", 2)[0]))
			continue
		}
		d.out.printf("ok: %s\n", verdict)
	}

	d.tryItYourself()
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	if len(failed) > 0 {
		d.out.printf("\ncrisp demo: %d of %d steps failed: step %s (%s)\n", len(failed), len(steps), strings.Join(failed, ", step "), elapsed)
		return fmt.Errorf("demo: %d of %d steps failed: %w", len(failed), len(steps), errReported)
	}
	if skipped > 0 {
		d.out.printf("\ncrisp demo: %d steps worked, %d skipped: profile %s's protocols cannot carry it (%s); the mock runtime and its socket are removed on exit.\n", len(steps)-skipped, skipped, o.Profile, elapsed)
		return nil
	}
	d.out.printf("\ncrisp demo: all %d steps worked (%s); the mock runtime and its socket are removed on exit.\n", len(steps), elapsed)
	return nil
}

// demoStepSkipped is a step the runtime's protocols cannot show (the legacy
// profile has no resize channel): said, and not a failure.
type demoStepSkipped struct{ why string }

func (s demoStepSkipped) Error() string { return "skipped: " + s.why }

// setUp creates the pod and its container through the CRI API.
func (d *demoRun) setUp(ctx context.Context) error {
	podCfg := client.PodConfig(demoPodName, "default", "", map[string]string{"app": "crisp-demo"})
	podCfg.Hostname = demoPodName
	podID, err := d.cli.RunPod(ctx, podCfg, "")
	if err != nil {
		return err
	}
	d.podID = podID
	cmd := []string{"sh", "-c", demoTicker}
	// Stdin open, so attach -i can show the detach keys.
	ctrCfg := client.ContainerConfig(demoContainerName, mockruntime.DefaultImage, cmd, false, true)
	ctrID, err := d.cli.CreateContainer(ctx, podID, ctrCfg, podCfg)
	if err != nil {
		return err
	}
	if err := d.cli.StartContainer(ctx, ctrID); err != nil {
		return err
	}
	d.ctrID = ctrID
	d.out.printf("pod %s (%s) running container %s (%s): sh -c %s\n",
		demoPodName, client.ShortID(podID), demoContainerName, client.ShortID(ctrID), demoShellQuote(demoTicker))
	d.out.printf("a TCP echo server on 127.0.0.1:%d stands for a server in the pod (pods share the host loopback)\n", d.echoPort)
	return nil
}

// stepProbe runs the probe matrix against the container, with the echo
// server's port for the port-forward checks.
func (d *demoRun) stepProbe(ctx context.Context) (string, error) {
	code, out := d.crisp(ctx, nil, "", "probe", demoContainerName, "--pod", demoPodName, "--port", strconv.Itoa(d.echoPort))
	if code != exitOK {
		return "", fmt.Errorf("crisp probe exited %d, want 0", code)
	}
	_, picks, found := strings.Cut(out, "--transport auto picks:")
	if !found {
		return "", errors.New("the probe printed no \"--transport auto picks:\" summary")
	}
	var picked []string
	for _, call := range []string{"exec", "attach", "port-forward"} {
		m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(call) + `:\s*(.*?)\s*(\(step|$)`).FindStringSubmatch(picks)
		if m == nil || strings.HasPrefix(m[1], "nothing") {
			return "", fmt.Errorf("--transport auto has no protocol for %s on this runtime", call)
		}
		picked = append(picked, call+" over "+m[1])
	}
	return "--transport auto picks " + strings.Join(picked, ", "), nil
}

// stepExitCode runs a command that exits 3: exec exits 3 too.
func (d *demoRun) stepExitCode(ctx context.Context) (string, error) {
	code, out := d.crisp(ctx, nil, "", "exec", demoContainerName, "--", "sh", "-c", demoExitCommand)
	if !strings.Contains(out, "hello from the container") {
		return "", fmt.Errorf("the command's output %q lacks \"hello from the container\"", out)
	}
	if code != demoExitCode {
		return "", fmt.Errorf("crisp exec exited %d, want the remote command's %d", code, demoExitCode)
	}
	return fmt.Sprintf("exit status %d: the remote command's own, passed through (crisp's own failures exit 125)", code), nil
}

// stepStdinEOF pipes two lines into `wc -l`, which counts them only once
// stdin's end reaches it.
func (d *demoRun) stepStdinEOF(ctx context.Context) (string, error) {
	code, out := d.crisp(ctx, strings.NewReader("a\nb\n"), `printf 'a\nb\n' | `, "exec", "-i", demoContainerName, "--", "wc", "-l")
	if code != exitOK {
		return "", fmt.Errorf("crisp exec -i exited %d, want 0", code)
	}
	if got := strings.TrimSpace(out); got != "2" {
		return "", fmt.Errorf("wc -l printed %q, want \"2\"", got)
	}
	return "wc -l saw 2 lines and the end of its input, then exited 0", nil
}

// stepTTYSize runs `stty size` on a TTY whose size is fixed at 24x80.
// crisp exec -t without a terminal on stdin warns and drops -t (kubectl's
// behaviour), and the demo has no terminal of its own to lend it (it may
// run in CI), so this step drives the same remotecommand.Stream exec -t uses,
// with a size queue that says 24x80.
func (d *demoRun) stepTTYSize(ctx context.Context) (string, error) {
	d.out.printf("$ %s   # in a %dx%d terminal\n", d.commandLine("", "exec", "-it", demoContainerName, "--", "stty", "size"), demoTTYRows, demoTTYCols)
	want := fmt.Sprintf("%d %d", demoTTYRows, demoTTYCols)
	// Runtimes may start the command a moment before the first size reaches
	// its terminal (REAL_RUNTIME.md): ask until it has (at most 40 times).
	cmd := []string{"sh", "-c", `n=0; until [ "$(stty size 2>/dev/null)" = "` + want + `" ] || [ $n -ge 40 ]; do n=$((n+1)); sleep 0.05; done; stty size`}
	src := d.cli.ExecSource("", &runtimeapi.ExecRequest{ContainerId: d.ctrID, Cmd: cmd, Tty: true, Stdout: true})
	offers, err := transport.ExecOffers(transport.Auto, "")
	if err != nil {
		return "", err
	}
	capture := newDemoCapture(d.out)
	sizes := newDemoSizeQueue(remotecommand.TerminalSize{Width: demoTTYCols, Height: demoTTYRows})
	res, err := remotecommand.Stream(ctx, "exec", src, offers, transport.Config{}, remotecommand.Streams{Stdout: capture, TTY: true, Resize: sizes})
	sizes.close()
	got := strings.TrimSpace(capture.text())
	if att, ok := res.Negotiated(); ok && (att.Protocol == transport.ExecProtocolV1 || att.Protocol == transport.ExecProtocolV2) && got != want {
		// What the legacy profile shows: a gap of the protocol, not a bug.
		return "", demoStepSkipped{fmt.Sprintf("the runtime speaks %s at best, which has no resize channel (v3.channel.k8s.io and later carry one), so the size never reached the TTY", att.Protocol)}
	}
	if err != nil {
		return "", fmt.Errorf("the TTY session failed: %w", err)
	}
	if got != want {
		return "", fmt.Errorf("stty size printed %q, want %q", got, want)
	}
	return fmt.Sprintf("the remote terminal is %d rows by %d columns, the size sent as the stream opened", demoTTYRows, demoTTYCols), nil
}

// stepAttach attaches with stdin open, waits for a line of the container's
// output, then types the detach keys (ctrl-p, ctrl-q): attach exits 0 and
// the container keeps running.
func (d *demoRun) stepAttach(ctx context.Context) (string, error) {
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	capture := newDemoCapture(d.out)
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	d.out.printf("$ %s   # then ctrl-p ctrl-q to detach\n", d.commandLine("", "attach", "-i", demoContainerName))
	go func() {
		code, out := d.run(ctx, stdinR, capture, "attach", "-i", demoContainerName)
		done <- result{code, out}
	}()
	line, waitErr := capture.waitFor(ctx, regexp.MustCompile(`tick \d+\n`))
	// The detach keys, typed even when no line came, so attach ends either
	// way. The write returns once attach has read them; if attach ended
	// first, closing the read side below makes it return.
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		_, _ = stdinW.Write([]byte{0x10, 0x11})
	}()
	r := <-done
	stdinR.Close()
	<-typed
	d.out.printf("[exit status %d]\n", r.code)
	if waitErr != nil {
		return "", fmt.Errorf("no line of output from the container: %w", waitErr)
	}
	if r.code != exitOK {
		return "", fmt.Errorf("crisp attach exited %d after the detach keys, want 0", r.code)
	}
	st, err := d.cli.ContainerStatus(ctx, d.ctrID, false)
	if err != nil {
		return "", fmt.Errorf("after detaching: %w", err)
	}
	if state := st.GetStatus().GetState(); state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return "", fmt.Errorf("after detaching, the container is %s, want running", client.ContainerStateName(state))
	}
	return fmt.Sprintf("attached, saw %q, detached with ctrl-p ctrl-q; the container keeps running", strings.TrimSpace(line)), nil
}

// stepPortForward forwards a free local port to the echo server's port in
// the pod, sends a line through it and reads it back, then stops
// port-forward as Ctrl-C would.
func (d *demoRun) stepPortForward(ctx context.Context) (string, error) {
	pfCtx, stop := context.WithCancel(ctx)
	defer stop()
	capture := newDemoCapture(d.out)
	remote := strconv.Itoa(d.echoPort)
	d.out.printf("$ %s   # a free local port, then Ctrl-C\n", d.commandLine("", "port-forward", demoPodName, ":"+remote))
	done := make(chan int, 1)
	go func() {
		code, _ := d.run(pfCtx, strings.NewReader(""), capture, "port-forward", demoPodName, ":"+remote)
		done <- code
	}()
	// Whatever happens next, port-forward is stopped and waited for.
	stopped := false
	stopForward := func() int {
		if stopped {
			return -1
		}
		stopped = true
		stop()
		code := <-done
		d.out.printf("[exit status %d]\n", code)
		return code
	}
	defer stopForward()

	line, err := capture.waitFor(ctx, regexp.MustCompile(`Forwarding from (\S+) -> `+remote+`\n`))
	if err != nil {
		return "", fmt.Errorf("port-forward printed no \"Forwarding from\" line: %w", err)
	}
	local := strings.Fields(line)[2]
	got, err := demoRoundTrip(ctx, local, []byte(demoPayload))
	if err != nil {
		return "", fmt.Errorf("round trip through %s: %w", local, err)
	}
	host, port, _ := net.SplitHostPort(local)
	d.out.printf("$ printf %s | nc %s %s   # answered %q\n", demoShellQuote(strings.ReplaceAll(demoPayload, "\n", `\n`)), host, port, got)
	if string(got) != demoPayload {
		return "", fmt.Errorf("sent %q through %s, got back %q", demoPayload, local, got)
	}
	if code := stopForward(); code != exitOK {
		return "", fmt.Errorf("crisp port-forward exited %d when stopped, want 0", code)
	}
	return fmt.Sprintf("%d bytes went from %s through the runtime to port %d in the pod and back", len(got), local, d.echoPort), nil
}

// tryItYourself prints the commands to try crisp by hand against a mock
// runtime of the reader's own.
func (d *demoRun) tryItYourself() {
	const sock = "unix:///tmp/crisp.sock"
	d.out.printf(`
=== Try it yourself
Start a mock runtime in another shell (Ctrl-C stops it and removes its containers;
crisp is bin/crisp after make build):
  crisp mock-runtime --listen %[1]s
Then, in this one:
  crisp -r %[1]s version
  crisp -r %[1]s smoke --image busybox
A pod and a container to exec into, made with crictl (crisp reads no pod specs):
  echo '{"metadata":{"name":"demo-pod","namespace":"default","uid":"demo-pod"}}' >pod.json
  echo '{"metadata":{"name":"demo"},"image":{"image":"busybox"},"command":["sh","-c","while :; do date; sleep 1; done"]}' >ctr.json
  crictl -r %[1]s run ctr.json pod.json
  crisp -r %[1]s exec -it demo sh
  crisp -r %[1]s attach demo
  crisp -r %[1]s probe demo
`, sock)
}

// crisp prints the command line, runs it and prints its exit status.
// prefix is shown before it (a pipe feeding stdin).
func (d *demoRun) crisp(ctx context.Context, stdin io.Reader, prefix string, args ...string) (int, string) {
	d.out.printf("$ %s\n", d.commandLine(prefix, args...))
	code, out := d.run(ctx, stdin, newDemoCapture(d.out), args...)
	d.out.printf("[exit status %d]\n", code)
	return code, out
}

// commandLine is what a user would type: crisp -r ENDPOINT ARGS...
func (d *demoRun) commandLine(prefix string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = demoShellQuote(a)
	}
	return prefix + "crisp -r " + d.endpoint + " " + strings.Join(quoted, " ")
}

// run runs one crisp command line through the real command tree, with
// stdout and stderr both going to capture (and on to the transcript), and
// returns its exit status as Main would and what it printed.
func (d *demoRun) run(ctx context.Context, stdin io.Reader, capture *demoCapture, args ...string) (int, string) {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	f := &factory{
		Streams: ioStreams{In: stdin, Out: capture, ErrOut: capture, IsTerminalIn: func() bool { return false }},
		Getenv: func(key string) string {
			if key == "CRI_CONFIG_FILE" {
				return d.configFile
			}
			return ""
		},
	}
	root := newRootCommand(f)
	root.SetArgs(append([]string{"-r", d.endpoint}, args...))
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK, capture.text()
	}
	var sig *tty.SignalError
	if errors.As(err, &sig) {
		d.signalled.Store(true)
	}
	passThrough := cmd != nil && cmd.Annotations[passThroughAnnotation] == "true"
	if !errors.Is(err, errReported) {
		fmt.Fprintf(capture, "crisp: %v\n", err)
	}
	return exitStatus(err, passThrough), capture.text()
}

// demoWriter serialises the transcript: commands running in the
// background (attach, port-forward) write while the demo does.
type demoWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *demoWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *demoWriter) printf(format string, args ...any) {
	fmt.Fprintf(l, format, args...)
}

// demoCapture records what one command prints, passes it on to the transcript,
// and lets the demo wait for a line.
type demoCapture struct {
	out io.Writer

	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newDemoCapture(out io.Writer) *demoCapture {
	return &demoCapture{out: out, changed: make(chan struct{})}
}

func (c *demoCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.buf.Write(p)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return c.out.Write(p)
}

func (c *demoCapture) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// waitFor waits until the output matches re and returns the match.
func (c *demoCapture) waitFor(ctx context.Context, re *regexp.Regexp) (string, error) {
	for {
		c.mu.Lock()
		m := re.FindString(c.buf.String())
		changed := c.changed
		c.mu.Unlock()
		if m != "" {
			return m, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// demoSizeQueue is a terminal that never resizes: its size once, then
// nothing until close (which ends client-go's resize goroutine).
type demoSizeQueue struct {
	size remotecommand.TerminalSize
	sent bool
	done chan struct{}
	once sync.Once
}

func newDemoSizeQueue(size remotecommand.TerminalSize) *demoSizeQueue {
	return &demoSizeQueue{size: size, done: make(chan struct{})}
}

// Next returns the size the first time, then blocks until close and
// returns nil. client-go calls it from one goroutine.
func (q *demoSizeQueue) Next() *remotecommand.TerminalSize {
	if !q.sent {
		q.sent = true
		size := q.size
		return &size
	}
	<-q.done
	return nil
}

func (q *demoSizeQueue) close() { q.once.Do(func() { close(q.done) }) }

// demoEchoServer is a TCP echo server on a free loopback port; close stops it
// and waits for every connection's goroutine.
type demoEchoServer struct {
	lis   net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startDemoEchoServer() (*demoEchoServer, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the echo server on 127.0.0.1: %w", err)
	}
	s := &demoEchoServer{lis: lis, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := lis.Accept()
			if err != nil {
				return // closed
			}
			s.mu.Lock()
			s.conns[conn] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				_, _ = io.Copy(conn, conn)
				conn.Close()
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
			}()
		}
	}()
	return s, nil
}

func (s *demoEchoServer) port() int { return s.lis.Addr().(*net.TCPAddr).Port }

func (s *demoEchoServer) close() {
	s.lis.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// demoRoundTrip sends payload to addr and reads as many bytes back, within
// ctx's deadline.
func demoRoundTrip(ctx context.Context, addr string, payload []byte) ([]byte, error) {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	// Closing the connection unblocks a read when ctx ends early (Ctrl-C).
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(payload); err != nil {
		return nil, err
	}
	got := make([]byte, len(payload))
	n, err := io.ReadFull(conn, got)
	return got[:n], err
}

// demoShellQuote quotes s for a POSIX shell when it needs it.
func demoShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
