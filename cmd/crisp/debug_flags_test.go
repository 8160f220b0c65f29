package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/debug"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// debug's flags and arguments become the request: -i and -t follow the
// terminal unless given, the command follows TARGET with or without "--",
// and bad values are usage errors before anything connects.
func TestDebugFlags(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		args     []string
		want     debug.Request
		usage    bool
	}{
		{name: "terminal, no command: a shell with -it", terminal: true, args: []string{"web"},
			want: debug.Request{Target: "web", Stdin: true, TTY: true, Profile: debug.ProfileGeneral, Way: cmdutil.WayAuto}},
		{name: "no terminal, a command: neither -i nor -t", args: []string{"web", "--", "ps"},
			want: debug.Request{Target: "web", Command: []string{"ps"}, Profile: debug.ProfileGeneral, Way: cmdutil.WayAuto}},
		{name: "no terminal, no command: stdin for the shell", args: []string{"web"},
			want: debug.Request{Target: "web", Stdin: true, Profile: debug.ProfileGeneral, Way: cmdutil.WayAuto}},
		{name: "-t=false on a terminal", terminal: true, args: []string{"-t=false", "--profile", "netadmin", "--way", "container", "--keep", "--image", "b", "web", "ip", "a"},
			want: debug.Request{Target: "web", Command: []string{"ip", "a"}, Stdin: true, Image: "b", Keep: true, Profile: debug.ProfileNetadmin, Way: debug.WayContainer}},
		{name: "unknown profile", args: []string{"--profile", "restricted", "web"}, usage: true},
		{name: "unknown way", args: []string{"--way", "ssh", "web"}, usage: true},
		{name: "--keep with --way host", args: []string{"--way", "host", "--keep", "web"}, usage: true},
		{name: "no target", args: nil, usage: true},
		{name: "--cleanup with a target", args: []string{"--cleanup", "web"}, usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams := cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, IsTerminalIn: func() bool { return tc.terminal }}
			o := &debugOptions{}
			o.runner.Deps = session.Deps{Streams: streams, Stream: (&fakeStreamer{}).stream}
			f := &cmdutil.Factory{Streams: streams}
			cmd := debugCommand(f, o)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Complete(f, cmd, cmd.Flags().Args())
			if err == nil {
				err = o.Validate()
			}
			if tc.usage {
				if !cmdutil.IsUsage(err) {
					t.Fatalf("want a usage error, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, o.request, cmpopts.IgnoreFields(debug.Request{}, "Offers", "TLS"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}
