package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// slowServer answers every upgrade with a refusal, but only after delay:
// within an attempt timeout shorter than delay it never answers at all.
type slowServer struct {
	srv   *httptest.Server
	delay time.Duration
}

func newSlowServer(t *testing.T, delay time.Duration) *slowServer {
	s := &slowServer{delay: delay}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(s.delay):
			http.Error(w, "too late", http.StatusForbidden)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *slowServer) Exec(context.Context, *runtimeapi.ExecRequest) (string, error) {
	return s.srv.URL + "/exec/tok", nil
}

func (s *slowServer) Attach(context.Context, *runtimeapi.AttachRequest) (string, error) {
	return s.srv.URL + "/attach/tok", nil
}

func (s *slowServer) PortForward(context.Context, *runtimeapi.PortForwardRequest) (string, error) {
	return s.srv.URL + "/portforward/tok", nil
}

// An upgrade that gets no answer within the attempt timeout is a timeout,
// for exec, attach and port-forward alike: not a refusal (an answer after the deadline does not count), not a sign
// that the runtime lacks the protocol; and the wait shows on progress.
func TestProbeUpgradeTimeoutIsATimeout(t *testing.T) {
	const attemptTimeout = 300 * time.Millisecond
	srv := newSlowServer(t, 2*time.Second)
	var mu sync.Mutex
	var progress []string
	p := &Prober{
		URLs: srv, Streamer: TransportStreamer{Config: transport.Config{UpgradeTimeout: time.Minute}},
		Timeout: attemptTimeout, Calls: []Call{CallExec, CallAttach, CallPortForward}, SlowAfter: 50 * time.Millisecond,
		Progress: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, fmt.Sprintf(format, args...))
		},
	}
	start := time.Now()
	rep, err := p.Run(context.Background(), Target{ContainerID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	n := len(rep.Results)
	if n == 0 {
		t.Fatal("no results")
	}
	// Each attempt ends at its timeout, long before the server's answer.
	if d, limit := time.Since(start), time.Duration(n)*(attemptTimeout+200*time.Millisecond); d > limit {
		t.Errorf("%d attempts took %s, want at most %s", n, d, limit)
	}
	for _, r := range rep.Results {
		if r.Kind() != "timeout" || r.Accepted || r.Status != 0 {
			t.Errorf("%s: kind %s (status %d, error %q), want timeout", r.Protocol, r.Kind(), r.Status, r.Error)
		}
	}
	for _, g := range rep.Summary.Gaps {
		if strings.Contains(g, "no WebSocket protocol at all") || strings.Contains(g, "no WebSocket v5") {
			t.Errorf("a gap concludes absence from timeouts: %s", g)
		}
	}
	if !strings.Contains(strings.Join(rep.Summary.Gaps, "\n"), "no answer in time") {
		t.Errorf("no gap says the upgrades timed out: %q", rep.Summary.Gaps)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < n {
		t.Errorf("%d progress lines for %d slow attempts: %q", len(progress), n, progress)
	}
}

// Port-forward's own upgrade bound words its timeout differently from
// exec's (portforward.ErrUpgradeTimeout, and with no deadline passed on the
// caller's context when the connection's deadline fires first): it is a
// timeout all the same, as exec's and attach's are.
func TestTimedOutIsSharedByEveryCall(t *testing.T) {
	pfErr := fmt.Errorf("port-forward: the runtime's streaming server did not answer: %w", portforward.ErrUpgradeTimeout)
	execErr := &transport.UpgradeTimeoutError{Op: "exec", After: time.Second}
	for name, err := range map[string]error{"port-forward": pfErr, "exec": execErr} {
		if !timedOut(context.Background(), transport.Attempt{}, err) {
			t.Errorf("%s: %v is not a timeout", name, err)
		}
	}
	// The attempt's deadline passed without an answer, whatever the error says.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if !timedOut(ctx, transport.Attempt{}, errors.New("read tcp: use of closed network connection")) {
		t.Error("an attempt past its deadline with no answer is not a timeout")
	}
	// An answer, even after the deadline, is a refusal.
	if timedOut(ctx, transport.Attempt{Status: http.StatusForbidden}, pfErr) {
		t.Error("a refusal counts as a timeout")
	}
}

// The auto line tells refused from timed out (and a mix), in the table and
// in the JSON summary.
func TestNothingPickedSaysWhy(t *testing.T) {
	srv := newSlowServer(t, 2*time.Second)
	p := &Prober{URLs: srv, Streamer: TransportStreamer{Config: transport.Config{UpgradeTimeout: time.Minute}},
		Timeout: 200 * time.Millisecond, Calls: []Call{CallPortForward}}
	rep, err := p.Run(context.Background(), Target{ContainerID: "c", PodID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.WriteTable(&table, false)
	if strings.Contains(table.String(), "refused") || !strings.Contains(table.String(), "nothing (no step of the auto order was answered in time)") {
		t.Errorf("every step timed out, the table says:\n%s", table.String())
	}
	if len(rep.Summary.Auto) != 1 || rep.Summary.Auto[0].Why != "no step of the auto order was answered in time" {
		t.Errorf("summary: %+v", rep.Summary.Auto)
	}

	mixed := &ProbeReport{Results: []Result{
		{Call: CallExec, Status: http.StatusForbidden},
		{Call: CallExec, TimedOut: true, Error: "late"},
		{Call: CallExec, TimedOut: true, Error: "late"},
	}}
	if got, want := nothingPicked(mixed, CallExec), "no step of the auto order was accepted: 1 refused, 2 timed out"; got != want {
		t.Errorf("mixed: %q, want %q", got, want)
	}
	refused := &ProbeReport{Results: []Result{{Call: CallExec, Status: http.StatusForbidden}}}
	if got, want := nothingPicked(refused, CallExec), "every step of the auto order was refused"; got != want {
		t.Errorf("refused: %q, want %q", got, want)
	}
}

// slowRPCs are URL RPCs that answer only when their context ends, as a
// runtime too busy to answer within the attempt timeout.
type slowRPCs struct{}

func (slowRPCs) wait(ctx context.Context, what string) (string, error) {
	<-ctx.Done()
	return "", fmt.Errorf("%s call: %w", what, ctx.Err())
}

func (s slowRPCs) Exec(ctx context.Context, _ *runtimeapi.ExecRequest) (string, error) {
	return s.wait(ctx, "Exec")
}

func (s slowRPCs) Attach(ctx context.Context, _ *runtimeapi.AttachRequest) (string, error) {
	return s.wait(ctx, "Attach")
}

func (s slowRPCs) PortForward(ctx context.Context, _ *runtimeapi.PortForwardRequest) (string, error) {
	return s.wait(ctx, "PortForward")
}

// The CRI call that makes the URL ran out of the attempt's time (a busy
// runtime): a timeout like an upgrade without an answer, never "failed".
func TestProbeRPCPastTheAttemptTimeoutIsATimeout(t *testing.T) {
	p := &Prober{URLs: slowRPCs{}, Streamer: TransportStreamer{}, Timeout: 50 * time.Millisecond, Calls: []Call{CallExec, CallAttach, CallPortForward}}
	rep, err := p.Run(context.Background(), Target{ContainerID: "c", PodID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rep.Results {
		if r.Kind() != "timeout" {
			t.Errorf("%s %s: kind %s (error %q), want timeout", r.Call, r.Protocol, r.Kind(), r.Error)
		}
	}
}

// slowRPC is a runtime whose calls for a streaming URL outlast the
// attempt, as gRPC ends them: DeadlineExceeded, "context deadline exceeded".
type slowRPC struct{}

func (slowRPC) wait(ctx context.Context) (string, error) {
	<-ctx.Done()
	return "", fmt.Errorf("rpc error: code = DeadlineExceeded desc = %w", ctx.Err())
}

func (s slowRPC) Exec(ctx context.Context, _ *runtimeapi.ExecRequest) (string, error) {
	return s.wait(ctx)
}

func (s slowRPC) Attach(ctx context.Context, _ *runtimeapi.AttachRequest) (string, error) {
	return s.wait(ctx)
}

func (s slowRPC) PortForward(ctx context.Context, _ *runtimeapi.PortForwardRequest) (string, error) {
	return s.wait(ctx)
}

// A CRI call that does not hand out its URL before the attempt's deadline
// (a busy runtime: make test's probe_fault_timeout met one) is a timeout
// worded as such, not gRPC's bare "context deadline exceeded".
func TestSlowURLCallIsAWordedTimeout(t *testing.T) {
	p := &Prober{URLs: slowRPC{}, Streamer: TransportStreamer{}, Timeout: 50 * time.Millisecond, Calls: []Call{CallExec, CallAttach, CallPortForward}}
	rep, err := p.Run(context.Background(), Target{ContainerID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rep.Results {
		if r.Kind() != "timeout" || strings.Contains(r.Error, "context deadline exceeded") || !strings.Contains(r.Error, "did not answer the CRI "+string(r.Call)+" call") {
			t.Errorf("%s %s: kind %s, error %q; want a timeout that names the call", r.Call, r.Protocol, r.Kind(), r.Error)
		}
	}
}
