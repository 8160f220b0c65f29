package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// noRuntime are dependencies that fail the test if anything dials: with
// RunF in Run's place, nothing should.
func noRuntime(t *testing.T) streamDeps {
	return streamDeps{
		Streams: cmdutil.IOStreams{Out: io.Discard, ErrOut: io.Discard},
		Dial: func(client.Settings) (*client.Client, error) {
			t.Error("a command line under test reached the runtime")
			return nil, context.Canceled
		},
		Stream: func(context.Context, string, transport.URLSource, []transport.Offer, transport.Config, remotecommand.Streams) (remotecommand.Result, error) {
			t.Error("a command line under test streamed")
			return remotecommand.Result{}, context.Canceled
		},
	}
}

// TestExecOptions: exec's command line becomes the session.Exec the
// session layer runs, and --label/--name the filter ExecMany runs on,
// without a runtime.
func TestExecOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want session.Exec
		many *session.Many
	}{
		{
			args: []string{"-i", "web", "--", "sh", "-c", "exit 7"},
			want: session.Exec{Container: "web", Command: []string{"sh", "-c", "exit 7"}, Stdin: true, Transport: "auto", ProtocolCache: true},
		},
		{
			args: []string{"--transport", "spdy", "--protocol", "v2", "--protocol-cache=false", "web", "true"},
			want: session.Exec{Container: "web", Command: []string{"true"}, Transport: "spdy", Protocol: "v2",
				Offers: []transport.Offer{{Transport: transport.SPDY, Protocols: []string{"v2.channel.k8s.io"}}}},
		},
		{
			args: []string{"-s", "--timeout", "3s", "web", "ls"},
			want: session.Exec{Container: "web", Command: []string{"ls"}, Sync: true, Timeout: 3 * time.Second, Transport: "auto", ProtocolCache: true},
		},
		{
			args: []string{"--label", "app=web", "--name", "^w", "--parallel", "2", "--", "uname"},
			want: session.Exec{Command: []string{"uname"}, Transport: "auto", ProtocolCache: true},
			many: &session.Many{Select: cmdutil.ContainerSelectors{Labels: []string{"app=web"}, Name: "^w"}, Parallel: 2,
				Filter: client.ContainerFilter{Labels: map[string]string{"app": "web"}, Name: regexp.MustCompile("^w")}},
		},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got *execOptions
			o := &execOptions{deps: noRuntime(t)}
			cmd := execCommand(&cmdutil.Factory{RunF: func(o any) error { got = o.(*execOptions); return nil }}, o)
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("Run was not reached")
			}
			ignore := cmp.Options{
				cmpopts.IgnoreFields(session.Exec{}, "TLS", "Trace", "Peer", "Record"), // the flag groups have their own tests
				cmp.Comparer(func(a, b *regexp.Regexp) bool {
					return (a == nil) == (b == nil) && (a == nil || a.String() == b.String())
				}),
			}
			if tc.want.Offers == nil {
				ignore = append(ignore, cmpopts.IgnoreFields(session.Exec{}, "Offers"))
				if len(got.Offers) == 0 {
					t.Error("Validate left no offers")
				}
			}
			if diff := cmp.Diff(tc.want, got.Exec, ignore); diff != "" {
				t.Errorf("session.Exec (-want +got):\n%s", diff)
			}
			if tc.many != nil {
				if diff := cmp.Diff(*tc.many, got.Many, ignore); diff != "" {
					t.Errorf("session.Many (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestAttachOptions: attach's command line becomes the session.Attach the
// session layer runs (the detach keys parsed, the exit wait kept), without
// a runtime.
func TestAttachOptions(t *testing.T) {
	var got *attachOptions
	o := &attachOptions{deps: noRuntime(t), Attach: session.Attach{ExitWait: attachExitWait}}
	cmd := attachCommand(&cmdutil.Factory{RunF: func(o any) error { got = o.(*attachOptions); return nil }}, o)
	cmd.SetArgs([]string{"-i", "-t", "--detach-keys", "ctrl-a,x", "--transport", "websocket", "--reconnect", "web"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("Run was not reached")
	}
	want := session.Attach{Container: "web", Stdin: true, TTY: true, DetachKeys: "ctrl-a,x", Keys: []byte{1, 'x'},
		Transport: "websocket", ProtocolCache: true, Reconnect: session.ReconnectFlags{Enabled: true}, ExitWait: attachExitWait}
	ignore := cmpopts.IgnoreFields(session.Attach{}, "TLS", "Trace", "Peer", "Record", "Offers")
	if diff := cmp.Diff(want, got.Attach, ignore); diff != "" {
		t.Errorf("session.Attach (-want +got):\n%s", diff)
	}
	for _, offer := range got.Offers {
		if offer.Transport != transport.WebSocket {
			t.Errorf("--transport websocket offers %v", offer)
		}
	}
	if len(got.Offers) == 0 {
		t.Error("Validate left no offers")
	}
}
