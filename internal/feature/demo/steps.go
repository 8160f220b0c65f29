package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// stepProbe runs the probe matrix against the container, with the echo
// server's port for the port-forward checks.
func (d *run) stepProbe(ctx context.Context) (string, error) {
	code, out := d.crisp(ctx, nil, "", "probe", ContainerName, "--pod", PodName, "--port", strconv.Itoa(d.echoPort))
	if code != 0 {
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
func (d *run) stepExitCode(ctx context.Context) (string, error) {
	code, out := d.crisp(ctx, nil, "", "exec", ContainerName, "--", "sh", "-c", exitCommand)
	if !strings.Contains(out, "hello from the container") {
		return "", fmt.Errorf("the command's output %q lacks \"hello from the container\"", out)
	}
	if code != exitCode {
		return "", fmt.Errorf("crisp exec exited %d, want the remote command's %d", code, exitCode)
	}
	return fmt.Sprintf("exit status %d: the remote command's own, passed through (crisp's own failures exit 125)", code), nil
}

// stepStdinEOF pipes two lines into `wc -l`, which counts them only once
// stdin's end reaches it.
func (d *run) stepStdinEOF(ctx context.Context) (string, error) {
	code, out := d.crisp(ctx, strings.NewReader("a\nb\n"), `printf 'a\nb\n' | `, "exec", "-i", ContainerName, "--", "wc", "-l")
	if code != 0 {
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
// run in CI), so this step drives the same transport.Stream exec -t uses,
// with a size queue that says 24x80.
func (d *run) stepTTYSize(ctx context.Context) (string, error) {
	d.out.printf("$ %s   # in a %dx%d terminal\n", d.commandLine("", "exec", "-it", ContainerName, "--", "stty", "size"), ttyRows, ttyCols)
	want := fmt.Sprintf("%d %d", ttyRows, ttyCols)
	// Runtimes may start the command a moment before the first size reaches
	// its terminal (containerd does): ask until it has (at most 40 times).
	cmd := []string{"sh", "-c", `n=0; until [ "$(stty size 2>/dev/null)" = "` + want + `" ] || [ $n -ge 40 ]; do n=$((n+1)); sleep 0.05; done; stty size`}
	src := d.cli.ExecSource("", &runtimeapi.ExecRequest{ContainerId: d.ctrID, Cmd: cmd, Tty: true, Stdout: true})
	offers, err := transport.ExecOffers(transport.Auto, "")
	if err != nil {
		return "", err
	}
	capture := newCapture(d.out)
	sizes := newSizeQueue(remotecommand.TerminalSize{Width: ttyCols, Height: ttyRows})
	res, err := remotecommand.Stream(ctx, "exec", src, offers, transport.NewConfig(transport.ConfigOptions{}), remotecommand.Streams{Stdout: capture, TTY: true, Resize: sizes})
	sizes.close()
	got := strings.TrimSpace(capture.text())
	if att, ok := res.Negotiated(); ok && (att.Protocol == transport.ExecProtocolV1 || att.Protocol == transport.ExecProtocolV2) && got != want {
		// What the legacy profile shows: a gap of the protocol, not a bug.
		return "", stepSkipped{fmt.Sprintf("the runtime speaks %s at best, which has no resize channel (%s and later carry one), so the size never reached the TTY", att.Protocol, transport.ExecProtocolV3)}
	}
	if err != nil {
		return "", fmt.Errorf("the TTY session failed: %w", err)
	}
	if got != want {
		return "", fmt.Errorf("stty size printed %q, want %q", got, want)
	}
	return fmt.Sprintf("the remote terminal is %d rows by %d columns, the size sent as the stream opened", ttyRows, ttyCols), nil
}

// stepAttach attaches with stdin open, waits for a line of the container's
// output, then types the detach keys (ctrl-p, ctrl-q): attach exits 0 and
// the container keeps running.
func (d *run) stepAttach(ctx context.Context) (string, error) {
	stdinR, stdinW := io.Pipe()
	defer func() { _ = stdinW.Close() }() // a pipe's Close never fails
	capture := newCapture(d.out)
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	d.out.printf("$ %s   # then ctrl-p ctrl-q to detach\n", d.commandLine("", "attach", "-i", ContainerName))
	go func() {
		code, out := d.run(ctx, stdinR, capture, "attach", "-i", ContainerName)
		done <- result{code, out}
	}()
	line, waitErr := capture.waitFor(ctx, regexp.MustCompile(`tick \d+\n`))
	// The detach keys, typed even when no line came, so attach ends either
	// way. The write returns once attach has read them; if attach ended
	// first, closing the read side below makes it return.
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		_, _ = stdinW.Write([]byte{0x10, 0x11}) // a pipe's Close never fails
	}()
	r := <-done
	_ = stdinR.Close() // a pipe's Close never fails
	<-typed
	d.out.printf("[exit status %d]\n", r.code)
	if waitErr != nil {
		return "", fmt.Errorf("no line of output from the container: %w", waitErr)
	}
	if r.code != 0 {
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
func (d *run) stepPortForward(ctx context.Context) (string, error) {
	pfCtx, stop := context.WithCancel(ctx)
	defer stop()
	capture := newCapture(d.out)
	remote := strconv.Itoa(d.echoPort)
	d.out.printf("$ %s   # a free local port, then Ctrl-C\n", d.commandLine("", "port-forward", PodName, ":"+remote))
	done := make(chan int, 1)
	go func() {
		code, _ := d.run(pfCtx, strings.NewReader(""), capture, "port-forward", PodName, ":"+remote)
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
	got, err := roundTrip(ctx, local, []byte(payload))
	if err != nil {
		return "", fmt.Errorf("round trip through %s: %w", local, err)
	}
	host, port, _ := net.SplitHostPort(local)
	d.out.printf("$ printf %s | nc %s %s   # answered %q\n", ShellQuote(strings.ReplaceAll(payload, "\n", `\n`)), host, port, got)
	if string(got) != payload {
		return "", fmt.Errorf("sent %q through %s, got back %q", payload, local, got)
	}
	if code := stopForward(); code != 0 {
		return "", fmt.Errorf("crisp port-forward exited %d when stopped, want 0", code)
	}
	return fmt.Sprintf("%d bytes went from %s through the runtime to port %d in the pod and back", len(got), local, d.echoPort), nil
}

// tryItYourself prints the commands to try crisp by hand against a mock
// runtime of the reader's own.
func (d *run) tryItYourself() {
	const sock = "unix:///tmp/crisp.sock"
	d.out.printf(`
=== Try it yourself
Start a mock runtime in another shell (Ctrl-C stops it and removes its containers;
crisp is bin/crisp after make build):
  crisp mock-runtime --listen %[1]s
Then, in this one:
  crisp -r %[1]s version
  crisp -r %[1]s smoke --image busybox
A pod and a container to exec into, made with crisp (crictl's config files):
  echo '{"metadata":{"name":"demo-pod","namespace":"default","uid":"demo-pod"},"log_directory":"/tmp"}' >pod.json
  echo '{"metadata":{"name":"demo"},"image":{"image":"busybox"},"command":["sh","-c","while :; do date; sleep 1; done"],"log_path":"crisp-demo.log"}' >ctr.json
  crisp -r %[1]s run ctr.json pod.json
  crisp -r %[1]s exec -it demo sh
  crisp -r %[1]s attach demo
  crisp -r %[1]s probe demo
  crisp -r %[1]s logs -f demo
  crisp -r %[1]s rmp -f demo-pod
`, sock)
}
