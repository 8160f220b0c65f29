package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCallErrors: every failure names the call and the endpoint it went to,
// and says what to do.
func TestCallErrors(t *testing.T) {
	c := &Client{Endpoint: "unix:///run/r.sock", ImageEndpoint: "unix:///run/i.sock", Timeout: 3 * time.Second}
	tests := []struct {
		name   string
		images bool
		err    error
		want   []string
	}{
		{name: "missing socket", err: status.Error(codes.Unavailable, "dial unix /run/r.sock: connect: no such file or directory"),
			want: []string{"listing pods: runtime at unix:///run/r.sock is unreachable", "no such file", "is the runtime running?", "-r/--runtime-endpoint"}},
		{name: "gRPC's wrapping is dropped", err: status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial unix /run/r.sock: connect: no such file or directory"`),
			want: []string{"is unreachable: dial unix /run/r.sock: connect: no such file or directory; is the runtime running?"}},
		{name: "no access", err: status.Error(codes.Unavailable, "dial unix /run/r.sock: connect: permission denied"),
			want: []string{"unreachable", "permission denied", "run it as root"}},
		{name: "image service", images: true, err: status.Error(codes.Unavailable, "connection refused"),
			want: []string{"runtime at unix:///run/i.sock is unreachable", "IMAGE_SERVICE_ENDPOINT or image-endpoint"}},
		{name: "slow", err: status.Error(codes.DeadlineExceeded, "context deadline exceeded"),
			want: []string{"did not answer within 3s", "raise --request-timeout"}},
		{name: "unimplemented", err: status.Error(codes.Unimplemented, "unknown method"),
			want: []string{"does not implement this call"}},
		{name: "other code", err: status.Error(codes.NotFound, "no such pod"),
			want: []string{"listing pods: no such pod (NotFound)"}},
		{name: "plain error", err: errors.New("boom"), want: []string{"listing pods: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := c.Call
			if tt.images {
				call = c.CallImages
			}
			err := call(context.Background(), "listing pods", func(context.Context) error { return tt.err })
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
		})
	}
	if err := c.Call(context.Background(), "x", func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("Call gave the call no deadline")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCallEndedByTheCaller: when the caller's own deadline (a command's
// --timeout) or interrupt ends a call, the error says that, recognisably,
// and does not send the user to --request-timeout.
func TestCallEndedByTheCaller(t *testing.T) {
	c := &Client{Endpoint: "unix:///run/r.sock", Timeout: time.Hour}
	expired, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-expired.Done()
	interrupted, stop := context.WithCancel(context.Background())
	stop()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"deadline", expired, context.DeadlineExceeded}, {"interrupt", interrupted, context.Canceled}} {
		err := c.Call(tc.ctx, "listing pods", func(ctx context.Context) error {
			return status.FromContextError(ctx.Err()).Err() // what gRPC answers
		})
		if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "--request-timeout") || !strings.HasPrefix(err.Error(), "listing pods: ") {
			t.Errorf("%s: %v; want 'listing pods: ' and %v, no --request-timeout", tc.name, err, tc.want)
		}
	}
}
