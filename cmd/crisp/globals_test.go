package main

import (
	"slices"
	"testing"
)

func TestCrictlArgsRewritesOnlyTheFlagsBeforeTheVerb(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"-r", "unix:///a.sock", "exec", "-r", "websocket", "c", "true"},
			[]string{"--runtime-endpoint=unix:///a.sock", "exec", "-r", "websocket", "c", "true"}},
		{[]string{"-runix:///a.sock", "-i", "unix:///b.sock", "images"},
			[]string{"--runtime-endpoint=unix:///a.sock", "--image-endpoint=unix:///b.sock", "images"}},
		{[]string{"-t", "5", "ps"}, []string{"--request-timeout=5s", "ps"}},
		{[]string{"--timeout=2s", "ps"}, []string{"--request-timeout=2s", "ps"}},
		{[]string{"-t", "0", "ps"}, []string{"ps"}}, // crictl: 0 or less is the default
		{[]string{"-t", "-1s", "ps"}, []string{"ps"}},
		{[]string{"-D", "-c", "x.yaml", "version"}, []string{"-D", "--config=x.yaml", "version"}},
		{[]string{"-v"}, []string{"--version"}},
		{[]string{"-v", "exec", "c", "true"}, []string{"-v", "exec", "c", "true"}}, // crisp's verbose exec
		{[]string{"ps", "-r", "-v"}, []string{"ps", "-r", "-v"}},
		{[]string{"-r"}, []string{"-r"}}, // cobra says the value is missing
		{[]string{"exec", "-x", "--label", "a=b", "true"}, []string{"exec", "--parallel=8", "--label", "a=b", "true"}},
		{[]string{"exec", "--parallel", "2", "--label", "a=b", "true"}, []string{"exec", "--parallel", "2", "--label", "a=b", "true"}},
		{[]string{"exec", "--name", "-x", "--parallel", "true"}, []string{"exec", "--name", "-x", "--parallel=8", "true"}},
		{[]string{"exec", "ctr", "tool", "-x", "y"}, []string{"exec", "ctr", "tool", "-x", "y"}}, // the command's own -x
	} {
		if got := crictlArgs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("crictlArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
