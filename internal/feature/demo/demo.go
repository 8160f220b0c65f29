// Package demo is `crisp demo`'s scenario: it starts the mock runtime in
// this process, creates a pod and a container in it, and runs the real crisp
// commands against it step by step (probe, exec, exec -i, exec -t, attach,
// port-forward), writing a transcript. It drives the client side against the
// mock, so it may import both; it knows nothing of the command line: the
// commands run through a Runner that cmd/crisp provides.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/tty"
)

// The demo's pod and container, and the commands it runs in them.
const (
	PodName       = "demo-pod"
	ContainerName = "demo"
	// ticker is the container's main process: a line every 0.2 s for
	// attach to show (the host's sleep and busybox's both take fractions;
	// `sleep 1` is the fallback for one that does not).
	ticker = `i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.2 2>/dev/null || sleep 1; done`
	// exitCommand prints a line and exits 3, which exec passes through.
	exitCommand = "echo hello from the container; exit 3"
	exitCode    = 3
	// ttyRows and ttyCols are the fixed size of step 4's terminal; not
	// 24x80, which busybox's stty reports for a terminal of no size.
	ttyRows = 40
	ttyCols = 120
	// payload is what the port-forward step sends through the tunnel.
	payload = "hello through the port-forward\n"
)

// Invocation is one crisp command line the demo runs.
type Invocation struct {
	// Args is the command line after the program's name; the demo puts
	// -r ENDPOINT first.
	Args []string
	// ConfigFile is the crictl-style config file the command must read
	// (in place of CRI_CONFIG_FILE and the host's), so the host's keys do
	// not apply to the mock.
	ConfigFile string
	Stdin      io.Reader
	// Out receives both stdout and stderr, the error line included.
	Out io.Writer
}

// Runner runs one crisp command line and returns its exit status, as the
// process would exit, and the command's error (nil on success).
type Runner func(ctx context.Context, inv Invocation) (code int, err error)

// Config is one run of the demo.
type Config struct {
	// Profile is the mock's streaming protocol profile.
	Profile streamserver.Profile
	// Out receives the transcript; ErrOut the mock runtime's log lines.
	Out, ErrOut io.Writer
	// Run runs crisp commands.
	Run Runner
	// StepTimeout bounds each step, so a broken runtime fails the demo
	// instead of hanging it; ProbeTimeout bounds the probe matrix.
	StepTimeout, ProbeTimeout time.Duration
}

// StepsFailedError is a demo whose steps ran but some failed; the
// transcript already says which.
type StepsFailedError struct{ Failed, Total int }

func (e *StepsFailedError) Error() string {
	return fmt.Sprintf("demo: %d of %d steps failed", e.Failed, e.Total)
}

// run is one run of the demo: the mock, the pod and container in it, and
// the transcript every step writes to.
type run struct {
	cfg Config
	out *lockedWriter

	dir        string // the run's temporary folder: socket, config, pod and container files
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
// happens; cancel ctx to interrupt it. An interrupted demo's error wraps
// context.Canceled; one whose steps failed is a *StepsFailedError.
func Run(ctx context.Context, cfg Config) (err error) {
	d := &run{cfg: cfg, out: &lockedWriter{w: cfg.Out}}
	start := time.Now()

	// A short folder: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "crisp")
	if err != nil {
		return fmt.Errorf("demo: create a temporary folder: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("demo: remove %s: %w", dir, rmErr)
		}
	}()
	// The commands the demo runs read this empty config instead of the
	// host's /etc/crictl.yaml or CRI_CONFIG_FILE, whose keys (timeouts, TLS)
	// are meant for another runtime.
	d.dir = dir
	d.configFile = filepath.Join(dir, "crictl.yaml")
	if err := os.WriteFile(d.configFile, []byte("{}\n"), 0o600); err != nil {
		return fmt.Errorf("demo: write %s: %w", d.configFile, err)
	}

	errOut := &lockedWriter{w: cfg.ErrOut}
	rt, err := mockruntime.Start(ctx, mockruntime.Config{
		Listen:  "unix://" + filepath.Join(dir, "cri.sock"),
		Profile: cfg.Profile,
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
	echo, err := startEchoServer()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer echo.close()
	d.echoPort = echo.port()

	d.cli, err = client.Dial(client.Settings{RuntimeEndpoint: d.endpoint, ImageEndpoint: d.endpoint, RequestTimeout: client.DefaultRequestTimeout})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer func() { _ = d.cli.Close() }() // a lazy connection to a runtime that is going away: nothing to report

	d.out.printf("crisp demo: a mock CRI runtime in this process (profile %s), CRI on %s, streaming on %s\n",
		cfg.Profile, d.endpoint, rt.StreamServer().Addr())
	if err := d.setUp(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("demo: interrupted while setting up: %w", ctx.Err())
		}
		return fmt.Errorf("demo: setting up the pod and container: %w", err)
	}
	return d.steps(ctx, start)
}

// steps runs every step and sums them up.
func (d *run) steps(ctx context.Context, start time.Time) error {
	steps := []struct {
		title   string
		timeout time.Duration
		run     func(context.Context) (string, error)
	}{
		{"probe: which streaming protocols the runtime speaks, and how well", d.cfg.ProbeTimeout, d.stepProbe},
		{"exec: the remote command's exit code passes through", d.cfg.StepTimeout, d.stepExitCode},
		{"exec -i: the end of stdin reaches the remote command", d.cfg.StepTimeout, d.stepStdinEOF},
		{"exec -t: the terminal's size reaches the remote TTY", d.cfg.StepTimeout, d.stepTTYSize},
		{"attach: the container's output, then detach", d.cfg.StepTimeout, d.stepAttach},
		{"port-forward: bytes through a forwarded port and back", d.cfg.StepTimeout, d.stepPortForward},
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
		var skip stepSkipped
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

	if err := d.tearDown(ctx); err != nil {
		d.out.printf("FAILED: cleaning up: %v\n", err)
		failed = append(failed, "clean-up")
	}
	d.tryItYourself()
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	if len(failed) > 0 {
		d.out.printf("\ncrisp demo: %d of %d steps failed: step %s (%s)\n", len(failed), len(steps), strings.Join(failed, ", step "), elapsed)
		return &StepsFailedError{Failed: len(failed), Total: len(steps)}
	}
	if skipped > 0 {
		d.out.printf("\ncrisp demo: %d steps worked, %d skipped: profile %s's protocols cannot carry it (%s); the mock runtime and its socket are removed on exit.\n", len(steps)-skipped, skipped, d.cfg.Profile, elapsed)
		return nil
	}
	d.out.printf("\ncrisp demo: all %d steps worked (%s); the mock runtime and its socket are removed on exit.\n", len(steps), elapsed)
	return nil
}

// stepSkipped is a step the runtime's protocols cannot show (the legacy
// profile has no resize channel): said, and not a failure.
type stepSkipped struct{ why string }

func (s stepSkipped) Error() string { return "skipped: " + s.why }

// setUp makes the pod and its container as a user would, with crisp run
// and crictl-style config files.
func (d *run) setUp(ctx context.Context) error {
	podFile, ctrFile := filepath.Join(d.dir, "pod.json"), filepath.Join(d.dir, "ctr.json")
	// Stdin open, so attach -i can show the detach keys.
	podJSON := podConfigJSON(d.dir)
	if err := os.WriteFile(podFile, []byte(podJSON), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(ctrFile, []byte(containerConfigJSON()), 0o600); err != nil {
		return err
	}
	d.out.printf("$ cat pod.json ctr.json\n%s%s", podJSON, containerConfigJSON())
	code, out := d.crisp(ctx, nil, "", "run", ctrFile, podFile)
	if code != 0 {
		return fmt.Errorf("crisp run exited %d: %s", code, strings.TrimSpace(out))
	}
	ctr, err := d.cli.ResolveContainer(ctx, strings.TrimSpace(out))
	if err != nil {
		return err
	}
	d.ctrID, d.podID = ctr.GetId(), ctr.GetPodSandboxId()
	d.out.printf("pod %s (%s) running container %s (%s): sh -c %s\n",
		PodName, client.ShortID(d.podID), ContainerName, client.ShortID(d.ctrID), ShellQuote(ticker))
	d.out.printf("a TCP echo server on 127.0.0.1:%d stands for a server in the pod (pods share the host loopback)\n", d.echoPort)
	return nil
}

// tearDown shows the container's last log lines, then removes the pod and
// its container with crisp rmp -f, as a user would (the mock removes what
// is left when it stops anyway).
func (d *run) tearDown(ctx context.Context) error {
	d.out.printf("\n=== Cleaning up\n")
	if code, out := d.crisp(ctx, nil, "", "logs", "--tail", "2", ContainerName); code != 0 {
		return fmt.Errorf("crisp logs exited %d: %s", code, strings.TrimSpace(out))
	}
	if code, out := d.crisp(ctx, nil, "", "rmp", "-f", PodName); code != 0 {
		return fmt.Errorf("crisp rmp -f %s exited %d: %s", PodName, code, strings.TrimSpace(out))
	}
	return nil
}

// The demo's pod and container, in crictl's config format.
func podConfigJSON(logDir string) string {
	return `{"metadata": {"name": "` + PodName + `", "namespace": "default", "uid": "` + PodName + `"},
 "hostname": "` + PodName + `", "labels": {"app": "crisp-demo"}, "log_directory": "` + logDir + `"}
`
}

func containerConfigJSON() string {
	var cmd strings.Builder
	enc := json.NewEncoder(&cmd)
	enc.SetEscapeHTML(false)                     // the shell's 2>/dev/null, as written
	_ = enc.Encode([]string{"sh", "-c", ticker}) // a []string always encodes
	return `{"metadata": {"name": "` + ContainerName + `"}, "image": {"image": "` + mockruntime.DefaultImage + `"},
 "command": ` + strings.TrimSpace(cmd.String()) + `, "stdin": true, "log_path": "demo.log"}
`
}

// crisp prints the command line, runs it and prints its exit status.
// prefix is shown before it (a pipe feeding stdin).
func (d *run) crisp(ctx context.Context, stdin io.Reader, prefix string, args ...string) (int, string) {
	d.out.printf("$ %s\n", d.commandLine(prefix, args...))
	code, out := d.run(ctx, stdin, newCapture(d.out), args...)
	d.out.printf("[exit status %d]\n", code)
	return code, out
}

// commandLine is what a user would type: crisp -r ENDPOINT ARGS...
func (d *run) commandLine(prefix string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = ShellQuote(a)
	}
	return prefix + "crisp -r " + d.endpoint + " " + strings.Join(quoted, " ")
}

// run runs one crisp command line against the mock, with stdout and stderr
// both going to capture (and on to the transcript), and returns its exit
// status and what it printed.
func (d *run) run(ctx context.Context, stdin io.Reader, capture *capture, args ...string) (int, string) {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code, err := d.cfg.Run(ctx, Invocation{
		Args:       append([]string{"-r", d.endpoint}, args...),
		ConfigFile: d.configFile,
		Stdin:      stdin,
		Out:        capture,
	})
	var sig *tty.SignalError
	if errors.As(err, &sig) {
		d.signalled.Store(true)
	}
	return code, capture.text()
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
