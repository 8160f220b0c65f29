package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/transport"
)

func TestParsePortSpec(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want transport.PortMapping
		err  string
	}{
		{spec: "80", want: transport.PortMapping{Local: 80, Remote: 80}},
		{spec: "8080:80", want: transport.PortMapping{Local: 8080, Remote: 80}},
		{spec: ":80", want: transport.PortMapping{Local: 0, Remote: 80}},
		{spec: "0:80", want: transport.PortMapping{Local: 0, Remote: 80}},
		{spec: "65535:1", want: transport.PortMapping{Local: 65535, Remote: 1}},
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
		got, err := parsePortSpec(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parsePortSpec(%q) = %v, %v; want an error containing %q", tc.spec, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parsePortSpec(%q): %v", tc.spec, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("parsePortSpec(%q) (-want +got):\n%s", tc.spec, diff)
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
		m, err := parsePortSpec(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "[LOCAL:]REMOTE") {
				t.Errorf("error %q does not say what is wanted", err)
			}
			return
		}
		if m.Remote == 0 {
			t.Fatalf("parsePortSpec(%q) accepted remote port 0", spec)
		}
		again, err := parsePortSpec(fmt.Sprintf("%d:%d", m.Local, m.Remote))
		if err != nil || again != m {
			t.Fatalf("parsePortSpec(%q) = %v, but its formatting parses to %v, %v", spec, m, again, err)
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
			want: portForwardOptions{PodRef: "web", Addresses: []string{"localhost"}, Transport: "auto",
				Mappings: []transport.PortMapping{{Local: 8080, Remote: 80}, {Remote: 443}}, transport: transport.Auto},
		},
		{
			args: []string{"--address", "127.0.0.1,::1", "--transport", "WebSocket", "abc", "80"},
			want: portForwardOptions{PodRef: "abc", Addresses: []string{"127.0.0.1", "::1"}, Transport: "WebSocket",
				Mappings: []transport.PortMapping{{Local: 80, Remote: 80}}, transport: transport.WebSocket},
		},
		{args: []string{"web"}, usage: "needs a POD and at least one"},
		{args: []string{"web", "80:"}, usage: "remote port is empty"},
		{args: []string{"web", "8080:80", "8080:81"}, usage: "local port 8080 is given twice"},
		{args: []string{"--transport", "quic", "web", "80"}, usage: "unknown transport"},
		{args: []string{"--address", "example.com", "web", "80"}, usage: "want an IP address or localhost"},
		{args: []string{"--tls-cert", "c.pem", "web", "80"}, usage: "--tls-cert and --tls-key go together"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got := &portForwardOptions{}
			cmd := got.command(func(context.Context) error { return nil })
			var out bytes.Buffer
			cmd.SetArgs(tc.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
			err := cmd.Execute()
			if tc.usage != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("got %v, want a usage error containing %q", err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			opts := cmp.Options{cmp.AllowUnexported(portForwardOptions{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.String() == "deps" || p.String() == "TLS"
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
