package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/transport"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

func TestParsePortSpec(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want portforward.PortMapping
		err  string
	}{
		{spec: "80", want: portforward.PortMapping{Local: 80, Remote: 80}},
		{spec: "8080:80", want: portforward.PortMapping{Local: 8080, Remote: 80}},
		{spec: ":80", want: portforward.PortMapping{Local: 0, Remote: 80}},
		{spec: "0:80", want: portforward.PortMapping{Local: 0, Remote: 80}},
		{spec: "65535:1", want: portforward.PortMapping{Local: 65535, Remote: 1}},
		{spec: "", err: "remote port is empty"},
		{spec: "0", err: "remote port 0 is not a port"},
		{spec: "80:", err: "remote port is empty"},
		{spec: "80:0", err: "remote port 0 is not a port"},
		{spec: "1:2:3", err: "more than one colon"},
		{spec: "http", err: `remote port "http" is not a number`},
		{spec: "a:80", err: `local port "a" is not a number`},
		{spec: "65536", err: "out of range"},
		{spec: "-1:80", err: "not a number"},
		{spec: "+80", err: "not a number"},
		{spec: " 80", err: "not a number"},
		{spec: "99999999999999999999:80", err: "out of range"},
	} {
		got, err := portforward.ParsePortSpec(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("portforward.ParsePortSpec(%q) = %v, %v; want an error containing %q", tc.spec, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("portforward.ParsePortSpec(%q): %v", tc.spec, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("portforward.ParsePortSpec(%q) (-want +got):\n%s", tc.spec, diff)
		}
	}
}

// FuzzParsePortSpec: no input panics; what parses has a real remote port and
// formats back to the same mapping.
func FuzzParsePortSpec(f *testing.F) {
	for _, s := range []string{"80", "8080:80", ":80", "0:80", "", "1:2:3", "65536", "a:b", "+1", "٣:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		m, err := portforward.ParsePortSpec(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "[LOCAL:]REMOTE") {
				t.Errorf("error %q does not say what is wanted", err)
			}
			return
		}
		if m.Remote == 0 {
			t.Fatalf("portforward.ParsePortSpec(%q) accepted remote port 0", spec)
		}
		again, err := portforward.ParsePortSpec(fmt.Sprintf("%d:%d", m.Local, m.Remote))
		if err != nil || again != m {
			t.Fatalf("portforward.ParsePortSpec(%q) = %v, but its formatting parses to %v, %v", spec, m, again, err)
		}
	})
}

// TestPortForwardFlags: flags and arguments into options, and usage errors
// (exit 2) before any connection is made.
func TestPortForwardFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  portForwardOptions
		usage string // want a usage error containing this
	}{
		{
			args: []string{"web", "8080:80", ":443"},
			want: portForwardOptions{Forward: session.Forward{PodRef: "web", Addresses: []string{"localhost"}, Transport: "auto",
				Mappings: []portforward.PortMapping{{Local: 8080, Remote: 80}, {Remote: 443}}, Family: transport.Auto}},
		},
		{
			args: []string{"--address", "127.0.0.1,::1", "--transport", "WebSocket", "abc", "80"},
			want: portForwardOptions{Forward: session.Forward{PodRef: "abc", Addresses: []string{"127.0.0.1", "::1"}, Transport: "WebSocket",
				Mappings: []portforward.PortMapping{{Local: 80, Remote: 80}}, Family: transport.WebSocket}},
		},
		{args: []string{"web"}, usage: "needs a POD and at least one"},
		{args: []string{"web", "80:"}, usage: "remote port is empty"},
		{args: []string{"web", "8080:80", "8080:81"}, usage: "local port 8080 is given twice"},
		{args: []string{"--transport", "quic", "web", "80"}, usage: "unknown transport"},
		{args: []string{"--address", "example.com", "web", "80"}, usage: "want an IP address or localhost"},
		{args: []string{"--tls-cert", "c.pem", "web", "80"}, usage: "--tls-cert and --tls-key go together"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// A fake Dial keeps Complete from taking the factory's; RunF
			// keeps Run from reaching a runtime.
			var got *portForwardOptions
			o := &portForwardOptions{deps: portForwardDeps{Deps: streamDeps{Dial: client.Dial}}}
			cmd := portForwardCommand(&cmdutil.Factory{RunF: func(o any) error { got = o.(*portForwardOptions); return nil }}, o)
			var out bytes.Buffer
			cmd.SetArgs(tc.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageError{Err: err} })
			err := cmd.Execute()
			if tc.usage != "" {
				var ue cmdutil.UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("got %v, want a usage error containing %q", err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("Run was not reached")
			}
			opts := cmp.Options{cmp.AllowUnexported(portForwardOptions{}), cmp.FilterPath(func(p cmp.Path) bool {
				s := p.String()
				return s == "deps" || s == "specs" || s == "Forward.TLS" || s == "Forward.Trace" || s == "Forward.Peer" // the flag groups have their own tests and scripts
			}, cmp.Ignore())}
			if diff := cmp.Diff(&tc.want, got, opts); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// cmdVarFrom sets an environment variable to the first submatch of a
// regular expression in a file, waiting (bounded) until it appears:
// varfrom [--var V] FILE REGEXP. Port-forward scripts learn the free local
// port crisp picked from its "Forwarding from" line so.
func cmdVarFrom(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! varfrom")
	}
	fs := flag.NewFlagSet("varfrom", flag.ContinueOnError)
	varName := fs.String("var", "PORT", "environment variable to set")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 2 {
		ts.Fatalf("usage: varfrom [--var V] FILE REGEXP")
	}
	re, err := regexp.Compile(rest[1])
	if err != nil || re.NumSubexp() < 1 {
		ts.Fatalf("varfrom: %q must compile and have a (submatch)", rest[1])
	}
	cmdWaitFor(ts, false, rest)
	m := re.FindSubmatch([]byte(ts.ReadFile(rest[0])))
	if m == nil {
		ts.Fatalf("varfrom: %s no longer matches %s", rest[0], rest[1])
	}
	ts.Setenv(*varName, string(m[1]))
}

// syncBuffer is an output stream written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pfOptionsFor builds port-forward options against a mock runtime, with
// buffers for streams.
func pfOptionsFor(endpoint string, out, errOut io.Writer, args ...string) *portForwardOptions {
	o := &portForwardOptions{
		Forward: session.Forward{Addresses: []string{"127.0.0.1"}, Transport: "auto"},
		deps: portForwardDeps{
			Deps: streamDeps{
				Streams: cmdutil.IOStreams{Out: out, ErrOut: errOut},
				Settings: func() (client.Settings, error) {
					return client.Settings{RuntimeEndpoint: endpoint, RequestTimeout: 10 * time.Second}, nil
				},
				Dial:    client.Dial,
				Verbose: 1,
			},
			Listen:       portforward.ListenLocal,
			NewForwarder: portforward.NewForwarder,
		},
	}
	if err := o.Complete(nil, nil, args); err != nil {
		panic(err)
	}
	if err := o.Validate(); err != nil {
		panic(err)
	}
	return o
}

// TestPortForwardRun runs the command's Run against the mock runtime: it
// prints the free local port, forwards, and returns nil (exit 0) when its
// context ends (SIGINT/SIGTERM in Main); a busy port and an unknown pod are
// failures (exit 1).
func TestPortForwardRun(t *testing.T) {
	env := mocktest.Start(t, mockruntime.Config{})
	env.RunPod(t, "web")
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() { _ = echo.Close() }() // the test is over
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer func() { _ = c.Close() }(); _, _ = io.Copy(c, c) }() // an echo: its errors end the connection the test checks
		}
	}()
	remote := echo.Addr().(*net.TCPAddr).Port

	var out, errOut syncBuffer
	o := pfOptionsFor(env.Endpoint, &out, &errOut, "web", fmt.Sprintf(":%d", remote))
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	re := regexp.MustCompile(fmt.Sprintf(`Forwarding from 127\.0\.0\.1:(\d+) -> %d\n`, remote))
	var local string
	for deadline := time.Now().Add(20 * time.Second); local == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			local = m[1]
		} else if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no Forwarding line; stdout %q, stderr %q, Run: %v", out.String(), errOut.String(), <-done)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+local)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite() // the read below shows whether the echo came back
	got, err := io.ReadAll(c)
	_ = c.Close() // read already checked
	if err != nil || string(got) != "ping" {
		t.Errorf("echo through the forward: %q, %v", got, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended: %v, want nil (exit 0)", err)
	}
	if !strings.Contains(errOut.String(), "negotiated SPDY portforward.k8s.io") {
		t.Errorf("-v did not name the protocol: %q", errOut.String())
	}

	t.Run("busy local port", func(t *testing.T) {
		var out, errOut syncBuffer
		o := pfOptionsFor(env.Endpoint, &out, &errOut, "web", fmt.Sprintf("%d:%d", remote, remote))
		err := o.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "already in use") || cmdutil.ExitStatus(err, false) != cmdutil.ExitFailure {
			t.Errorf("got %v (exit %d), want a busy-port failure, exit 1", err, cmdutil.ExitStatus(err, false))
		}
	})
	t.Run("unknown pod", func(t *testing.T) {
		var out, errOut syncBuffer
		o := pfOptionsFor(env.Endpoint, &out, &errOut, "nope", "80")
		err := o.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "nope") || cmdutil.ExitStatus(err, false) != cmdutil.ExitFailure {
			t.Errorf("got %v (exit %d), want a not-found failure, exit 1", err, cmdutil.ExitStatus(err, false))
		}
	})
}
