package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// Bad flags of mock-runtime are usage errors (exit 2), before anything
// listens.
func TestMockRuntimeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mock-runtime"}, "--listen is required"},
		{[]string{"mock-runtime", "--listen", "/tmp/x.sock"}, "--listen must be unix:///ABSOLUTE/PATH"},
		{[]string{"mock-runtime", "--listen", "unix://rel.sock"}, "--listen must be unix:///ABSOLUTE/PATH"},
		{[]string{"mock-runtime", "--listen", "unix:///tmp/x.sock", "--profile", "bogus"}, `--profile must be one of full, cri-streaming, conmon-rs, legacy; got "bogus"`},
		{[]string{"mock-runtime", "--listen", "unix:///tmp/x.sock", "--stream-addr", "0.0.0.0:0"}, "--stream-addr must be a loopback address"},
		{[]string{"mock-runtime", "--listen", "unix:///tmp/x.sock", "--stream-addr", "nope"}, "--stream-addr must be HOST:PORT"},
		{[]string{"mock-runtime", "--listen", "unix:///tmp/x.sock", "--fault", "explode"}, "--fault"},
		{[]string{"mock-runtime", "--listen", "unix:///tmp/x.sock", "extra"}, "takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(tc.args, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
			if code != cmdutil.ExitUsage {
				t.Errorf("exit %d, want %d\nstderr: %s", code, cmdutil.ExitUsage, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tc.want)
			}
		})
	}
}

// mock-runtime serves until its context ends, says where on one line, and
// removes its socket on the way out.
func TestMockRuntimeRunsUntilCancelled(t *testing.T) {
	sock := filepath.Join(testkit.SocketDir(t), "m.sock")
	errOut := &testkit.LockedBuffer{}
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut, IsTerminalIn: func() bool { return false }}}
	o := &mockRuntimeOptions{Options: mockruntime.Options{Listen: "unix://" + sock, Profile: "legacy", StreamAddr: "127.0.0.1:0"}}
	if err := o.Complete(f, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()

	line := regexp.MustCompile(`serving CRI on unix://` + regexp.QuoteMeta(sock) + `, profile legacy, streaming on 127\.0\.0\.1:\d+`)
	if !testkit.Poll(30*time.Second, func() bool { return line.MatchString(errOut.String()) }) {
		cancel()
		t.Fatalf("no start-up line on stderr: %q (Run: %v)", errOut.String(), <-done)
	}
	if fi, err := os.Stat(sock); err != nil {
		t.Errorf("socket %s: %v", sock, err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %s has mode %v, want 0600", sock, fi.Mode().Perm())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket remains after shutdown: %v", err)
	}
}
