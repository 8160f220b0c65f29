package probe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Names of bench's figures.
const (
	FigureExecTrue = "exec-true-latency"
	FigureStdout   = "exec-stdout"
	FigureStdin    = "exec-stdin"
	FigureForward  = "port-forward-echo"
)

// LatencyRuns is how many `exec true` runs the latency median is of.
const LatencyRuns = 20

// BenchReport is bench's answer: figures per call and transport.
type BenchReport struct {
	Container string `json:"container"`
	Pod       string `json:"pod"`
	Port      int32  `json:"port,omitempty"`
	// Size is the bytes each throughput run moves; Runs how many runs each
	// throughput median is of.
	Size    int64         `json:"size"`
	Runs    int           `json:"runs"`
	Results []BenchResult `json:"results"`
	// Unusable names the calls nothing could be measured for: the runtime
	// accepted no step of the auto order (with its answers).
	Unusable []string `json:"unusable,omitempty"`
}

// BenchResult is the figures of one call on one protocol.
type BenchResult struct {
	Call Call `json:"call"`
	Protocol
	// Auto is true for the protocol --transport auto picks.
	Auto    bool     `json:"auto"`
	Figures []Figure `json:"figures"`
}

// Figure is one measurement, repeated.
type Figure struct {
	Name string `json:"name"`
	// Unit is "ms" for latencies and "MB/s" (10^6 bytes) for throughput.
	Unit string `json:"unit"`
	Stats
	// Error is why the figure could not be measured (then Stats is empty).
	Error string `json:"error,omitempty"`
	// Skipped says why the figure was not measured.
	Skipped string `json:"skipped,omitempty"`
}

// Bencher runs bench.
type Bencher struct {
	URLs     URLs
	Streamer Streamer
	// Size is what each throughput run moves (default 64 MiB).
	Size int64
	// Runs is how many throughput runs each median is of (default 5).
	Runs int
	// LatencyRuns defaults to LatencyRuns.
	LatencyRuns int
	// Timeout bounds each run (default 60s).
	Timeout time.Duration
}

func (b *Bencher) defaults() {
	if b.Size <= 0 {
		b.Size = 64 << 20
	}
	if b.Runs <= 0 {
		b.Runs = 5
	}
	if b.LatencyRuns <= 0 {
		b.LatencyRuns = LatencyRuns
	}
	if b.Timeout <= 0 {
		b.Timeout = 60 * time.Second
	}
}

// benchProtocols are the steps of the auto order for each call, the
// transports users can end up on.
func benchProtocols(call Call, accepted func(Protocol) bool) []Protocol {
	steps, _ := transport.Order(call, transport.Auto)
	var out []Protocol
	for _, st := range steps {
		// A step offers its protocols together: the server picks the first
		// it speaks.
		for _, name := range st.Protocols {
			if p := (Protocol{Transport: st.Transport, Name: name}); accepted(p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Run finds the accepted protocols (a handshake-only probe) and measures
// each step of the auto order the runtime accepts.
func (b *Bencher) Run(ctx context.Context, t Target) (*BenchReport, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	b.defaults()
	prober := &Prober{URLs: b.URLs, Streamer: b.Streamer, Calls: []Call{CallExec, CallPortForward}, SkipChecks: true}
	matrix, err := prober.Run(ctx, t)
	if err != nil {
		return nil, err
	}
	rep := &BenchReport{Container: t.ContainerID, Pod: t.PodID, Port: t.Port, Size: b.Size, Runs: b.Runs}
	for _, call := range []Call{CallExec, CallPortForward} {
		auto, ok := matrix.Auto(call)
		if !ok {
			rep.Unusable = append(rep.Unusable, refusals(matrix, call))
			continue
		}
		for _, p := range benchProtocols(call, func(p Protocol) bool { return matrix.Accepted(call, p) }) {
			res := BenchResult{Call: call, Protocol: p, Auto: p == auto}
			if call == CallExec {
				res.Figures = append(res.Figures,
					b.figure(ctx, FigureExecTrue, "ms", b.LatencyRuns, func(ctx context.Context) (float64, error) { return b.execTrue(ctx, t, p) }),
					b.figure(ctx, FigureStdout, "MB/s", b.Runs, func(ctx context.Context) (float64, error) { return b.stdout(ctx, t, p) }),
					b.figure(ctx, FigureStdin, "MB/s", b.Runs, func(ctx context.Context) (float64, error) { return b.stdin(ctx, t, p) }),
				)
			} else if t.Port == 0 {
				res.Figures = append(res.Figures, Figure{Name: FigureForward, Unit: "MB/s", Skipped: "no --port given (it must reach a TCP echo server in the pod)"})
			} else {
				res.Figures = append(res.Figures, b.figure(ctx, FigureForward, "MB/s", b.Runs, func(ctx context.Context) (float64, error) { return b.forward(ctx, t, p) }))
			}
			rep.Results = append(rep.Results, res)
			if err := ctx.Err(); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// figure repeats run n times; the first failure ends the figure.
func (b *Bencher) figure(ctx context.Context, name, unit string, n int, run func(context.Context) (float64, error)) Figure {
	f := Figure{Name: name, Unit: unit}
	var values []float64
	for i := 0; i < n; i++ {
		rctx, cancel := context.WithTimeout(ctx, b.Timeout)
		v, err := run(rctx)
		cancel()
		if err != nil {
			f.Error = fmt.Sprintf("run %d of %d: %v", i+1, n, err)
			f.Stats = Summarise(nil)
			f.Median, f.Min, f.Max = 0, 0, 0
			return f
		}
		values = append(values, v)
	}
	f.Stats = Summarise(values)
	return f
}

func mbps(n int64, d time.Duration) float64 {
	if d <= 0 {
		d = time.Nanosecond
	}
	return float64(n) / 1e6 / d.Seconds()
}

// execOnce runs one exec and turns a refusal, a non-zero exit or a failure
// into an error.
func (b *Bencher) execOnce(ctx context.Context, t Target, p Protocol, req *runtimeapi.ExecRequest, s Session) error {
	req.ContainerId = t.ContainerID
	url, err := b.URLs.Exec(ctx, req)
	if err != nil {
		return err
	}
	hs, err := b.Streamer.Stream(ctx, url, p, s)
	if !hs.Accepted {
		return upgradeFailed(hs, err)
	}
	if code, ok := exitStatus(err); !ok || code != 0 {
		return fmt.Errorf("%q: %w", req.Cmd, err)
	}
	return nil
}

func (b *Bencher) execTrue(ctx context.Context, t Target, p Protocol) (float64, error) {
	start := time.Now()
	if err := b.execOnce(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"true"}, Stdout: true, Stderr: true}, Session{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Nanoseconds()) / 1e6, nil
}

func (b *Bencher) stdout(ctx context.Context, t Target, p Protocol) (float64, error) {
	cw := &countWriter{w: io.Discard}
	var errOut bytes.Buffer
	start := time.Now()
	err := b.execOnce(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", zeroSource(b.Size)}, Stdout: true, Stderr: true},
		Session{Stdout: cw, Stderr: &errOut})
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if cw.n != b.Size {
		return 0, fmt.Errorf("read %d bytes of %d (stderr %q)", cw.n, b.Size, clip(errOut.String()))
	}
	return mbps(b.Size, d), nil
}

func (b *Bencher) stdin(ctx context.Context, t Target, p Protocol) (float64, error) {
	var out, errOut bytes.Buffer
	// The reader ends after SIZE bytes, so protocols that cannot close
	// stdin are measured too; wc says how many bytes really arrived.
	cmd := []string{"sh", "-c", zeroSink(b.Size)}
	start := time.Now()
	err := b.execOnce(ctx, t, p, &runtimeapi.ExecRequest{Cmd: cmd, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: io.LimitReader(zeros{}, b.Size), Stdout: &out, Stderr: &errOut, CloseStdin: capabilities(CallExec, p).StdinEOF})
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%w (stderr %q)", err, clip(errOut.String()))
	}
	if got := strings.TrimSpace(out.String()); got != fmt.Sprint(b.Size) {
		return 0, fmt.Errorf("sent %d bytes to stdin, the command counted %q (stderr %q)", b.Size, clip(got), clip(errOut.String()))
	}
	return mbps(b.Size, d), nil
}

func (b *Bencher) forward(ctx context.Context, t Target, p Protocol) (float64, error) {
	url, err := b.URLs.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: t.PodID, Port: []int32{t.Port}})
	if err != nil {
		return 0, err
	}
	hs, conn, err := b.Streamer.Forward(ctx, url, p, t.Port)
	if !hs.Accepted {
		return 0, upgradeFailed(hs, err)
	}
	if err != nil || conn == nil {
		return 0, fmt.Errorf("could not open a connection to port %d: %w", t.Port, err)
	}
	start := time.Now()
	n, err := echoThrough(ctx, conn, b.Size)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if n != b.Size {
		return 0, fmt.Errorf("port %d echoed %d bytes of %d; bench needs an echo server there", t.Port, n, b.Size)
	}
	return mbps(b.Size, d), nil
}

// echoThrough writes size zero bytes to conn while reading the echo back,
// and returns how many bytes came back. It closes conn.
func echoThrough(ctx context.Context, conn Conn, size int64) (int64, error) {
	writeErr := make(chan error, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := io.Copy(conn, io.LimitReader(zeros{}, size))
		writeErr <- err
	}()
	stop := closeOnDone(ctx, conn)
	var n int64
	buf := make([]byte, 64<<10)
	var rerr error
	for n < size {
		m, err := conn.Read(buf)
		n += int64(m)
		if err != nil {
			rerr = err
			break
		}
	}
	stop()
	werr := <-writeErr
	switch {
	case ctx.Err() != nil:
		return n, fmt.Errorf("echo of %d bytes not done in time (%d back)", size, n)
	case n < size && rerr != nil:
		return n, fmt.Errorf("connection ended after %d bytes: %w", n, rerr)
	case werr != nil && n < size:
		return n, fmt.Errorf("writing: %w", werr)
	}
	return n, nil
}

// benchBlock is the block size of the remote dd: busybox head writes in
// small blocks and would measure itself rather than the stream.
const benchBlock = 1 << 20

// zeroSource is a shell command writing size zero bytes to stdout.
func zeroSource(size int64) string {
	cmd := ""
	if n := size / benchBlock; n > 0 {
		cmd = fmt.Sprintf("dd if=/dev/zero bs=%d count=%d 2>/dev/null", benchBlock, n)
	}
	if r := size % benchBlock; r > 0 {
		if cmd != "" {
			cmd += "; "
		}
		cmd += fmt.Sprintf("head -c %d /dev/zero", r)
	}
	return cmd
}

// zeroSink is a shell command reading exactly size bytes of stdin and
// printing how many it read.
func zeroSink(size int64) string {
	if size%benchBlock == 0 {
		return fmt.Sprintf("dd bs=%d count=%d iflag=fullblock 2>/dev/null | wc -c", benchBlock, size/benchBlock)
	}
	return fmt.Sprintf("head -c %d | wc -c", size)
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// upgradeFailed is the error of an attempt whose upgrade was not accepted:
// refused, or not answered in time.
func upgradeFailed(hs Handshake, err error) error {
	if hs.TimedOut {
		return fmt.Errorf("upgrade timed out: %s", errText(err, Result{}))
	}
	return fmt.Errorf("upgrade refused: %s", errText(err, Result{Status: hs.Status, Reason: hs.Reason}))
}
