package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// shapeCase is one command's lines for TestEveryCommandRejectsBadInputFirst:
// ok reaches Run (the factory's RunF stands in for it), each of bad is a
// usage error found before Run and before any runtime is asked.
type shapeCase struct {
	ok  []string
	bad [][]string
}

// shapeCases holds a row for every command on root's tree; the test fails
// for a command without one, so a new command brings its own lines.
var shapeCases = map[string]shapeCase{
	"exec":         {ok: words("c1 -- true"), bad: lines("c1", "--transport bogus c1 true", "-s -i c1 true", "--timeout 3s c1 true")},
	"attach":       {ok: words("c1"), bad: lines("", "c1 c2", "--transport bogus c1", "--detach-keys ctrl-@@ c1")},
	"port-forward": {ok: words("p1 8080:80"), bad: lines("p1", "p1 notaport", "--transport bogus p1 80")},
	"cp":           {ok: words("c1:/etc/hosts hosts"), bad: lines("c1:/etc/hosts", "--way bogus c1:/etc/hosts hosts")},
	"debug":        {ok: words("c1"), bad: lines("", "--profile bogus c1", "--cleanup c1")},

	"version":               {ok: nil, bad: lines("extra")},
	"info":                  {ok: nil, bad: lines("extra")},
	"pods":                  {ok: nil, bad: lines("extra", "--state sleeping", "--name (", "-q --output=json")},
	"ps":                    {ok: nil, bad: lines("extra", "--state bogus", "--label novalue", "-q --output=yaml")},
	"inspect":               {ok: words("c1"), bad: lines("--state paused", "-n -1", "--name (")},
	"inspectp":              {ok: words("p1"), bad: lines("--state gone", "--label novalue")},
	"images":                {ok: nil, bad: lines("a b", "-f bogus=1", "-f dangling=maybe", "-q --output=json")},
	"inspecti":              {ok: words("busybox"), bad: lines("-f bogus=1", "-f reference=(")},
	"stats":                 {ok: nil, bad: lines("a b", "-s 0", "--label novalue")},
	"statsp":                {ok: nil, bad: lines("a b", "-s 0")},
	"imagefsinfo":           {ok: nil, bad: lines("extra")},
	"events":                {ok: nil, bad: lines("extra")},
	"runtime-config":        {ok: nil, bad: lines("extra")},
	"metricdescs":           {ok: nil, bad: lines("extra")},
	"metricsp":              {ok: nil, bad: lines("extra")},
	"update-runtime-config": {ok: words("--pod-cidr 10.0.0.0/24"), bad: lines("", "extra --pod-cidr 10.0.0.0/24")},
	"config":                {ok: words("--list"), bad: lines("a b c", "--get bogus", "--set timeout=abc", "--set nokey", "bogus 1", "timeout abc")},

	"pull": {ok: words("-u robot busybox"), bad: lines("", "a b", "--creds a:b --auth YTpi busybox", "--creds :secret busybox", "--annotation novalue busybox")},
	"rmi":  {ok: words("busybox"), bad: lines("")},

	"runp":       {ok: words("pod.json"), bad: lines("", "a b")},
	"create":     {ok: words("p1 ctr.json pod.json"), bad: lines("p1 ctr.json", "--no-pull --with-pull p1 ctr.json pod.json")},
	"start":      {ok: words("c1"), bad: lines("")},
	"run":        {ok: words("ctr.json pod.json"), bad: lines("ctr.json", "--no-pull --with-pull ctr.json pod.json")},
	"stop":       {ok: words("c1"), bad: lines("", "-a c1")},
	"rm":         {ok: words("c1"), bad: lines("", "-a c1")},
	"stopp":      {ok: words("p1"), bad: lines("")},
	"rmp":        {ok: words("p1"), bad: lines("", "-a p1")},
	"update":     {ok: words("c1"), bad: lines("", "--memory -1 c1", "--oom-score-adj 99999 c1")},
	"checkpoint": {ok: words("--export c1.tar c1"), bad: lines("c1", "--export c1.tar")},
	"logs":       {ok: words("c1"), bad: lines("", "c1 c2", "--since yesterday c1", "--tail 1 -s stdout c1")},

	"probe":  {ok: words("c1"), bad: lines("", "--attempt-timeout 0 c1", "--port 70000 c1", "--output=go-template c1")},
	"smoke":  {ok: words("c1"), bad: lines("", "c1 c2", "--pod-config /nonexistent c1 => --pod-config goes with --image", "--image busybox --pod p1", "--timeout -1s c1", "--output=go-template c1")},
	"bench":  {ok: words("c1"), bad: lines("", "--runs 0 c1", "--size 0 c1", "--output=go-template c1")},
	"report": {ok: words("r.json"), bad: lines("", "--output=go-template r.json")},
	"fleet":  {ok: words("smoke"), bad: lines("", "bogus", "--port 70000 smoke", "--selector a=b --nodes n1 smoke")},
	"doctor": {ok: words("c1"), bad: lines("c1 c2", "--repeat 0 c1", "--port 80", "--hop-timeout 0 c1", "--output=go-template c1", "--container web c1", "--kubeconfig /nonexistent/kc", "--kubeconfig /nonexistent/kc ns/", "--kubeconfig /nonexistent/kc --tls-ca ca.pem ns/p", "--kubeconfig /nonexistent/kc -n a b/p", "--pod p1", "--node-side c1", "--kubeconfig /nonexistent/kc --pod p1 ns/p")},
	"trace":  {ok: words("trace.json"), bad: lines("", "a b")},

	"mock-runtime": {ok: words("--listen unix:///tmp/crisp-shape-never.sock"), bad: lines("", "extra --listen unix:///tmp/crisp-shape-never.sock", "--profile bogus --listen unix:///tmp/crisp-shape-never.sock")},
	"demo":         {ok: nil, bad: lines("extra", "--profile bogus")},
	"completion":   {ok: words("bash"), bad: lines("", "tcsh")},
	"gen-docs":     {ok: nil, bad: lines("extra")},
}

// globalBad are root's flags with values root rejects, given after the
// verb (before it, crictl's -t/--timeout of zero or less means the
// default); every command must see root's checks.
var globalBad = [][]string{{"--request-timeout=-1s", "=>", "--request-timeout must be positive"}, {"--output=xml", "=>", `"xml"`}}

// words splits a command line on spaces; lines does it for each. In a bad
// line, what follows "=>" is a part of the error message to expect.
func words(s string) []string { return strings.Fields(s) }

// splitWant cuts the expected message off a bad line.
func splitWant(line []string) (args []string, want string) {
	if i := slices.Index(line, "=>"); i >= 0 {
		return line[:i], strings.Join(line[i+1:], " ")
	}
	return line, ""
}

func lines(ss ...string) [][]string {
	out := make([][]string, len(ss))
	for i, s := range ss {
		out[i] = words(s)
	}
	return out
}

// TestEveryCommandRejectsBadInputFirst walks root's tree: for every command,
// a bad argument count, a bad flag value and a bad global flag exit 2 (125
// for exec, attach and debug, whose own statuses are the remote's) with a
// usage error, before Run and before any runtime is asked: the factory's
// client constructor fails the test when called, and the runtime endpoint
// records every connection. The good line reaches Run through the
// factory's RunF, with the same guards.
func TestEveryCommandRejectsBadInputFirst(t *testing.T) {
	rt := newRecordingRuntime(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "crictl.yaml")
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, args []string) (code int, cmd *cobra.Command, reached any, err error) {
		t.Helper()
		var out, errOut bytes.Buffer
		f := &cmdutil.Factory{
			Streams: cmdutil.IOStreams{In: &stdinRead{t, args}, Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }},
			Getenv: func(key string) string {
				switch key {
				case "CONTAINER_RUNTIME_ENDPOINT":
					return rt.endpoint
				case "CRI_CONFIG_FILE":
					return config
				}
				return ""
			},
			Dial: func(client.Settings) (*client.Client, error) {
				t.Errorf("crisp %s asked the factory for a runtime client", strings.Join(args, " "))
				return nil, errors.New("no runtime in this test")
			},
			RunF: func(o any) error { reached = o; return nil },
		}
		before := rt.conns.Load()
		code, cmd, err = execute(t.Context(), f, args)
		if n := rt.conns.Load() - before; n > 0 {
			t.Errorf("crisp %s connected to the runtime endpoint %d time(s)", strings.Join(args, " "), n)
		}
		return code, cmd, reached, err
	}

	root := newRootCommand(&cmdutil.Factory{})
	seen := map[string]bool{}
	for _, cmd := range runnable(root) {
		name := strings.TrimPrefix(cmd.CommandPath(), "crisp ")
		seen[name] = true
		if cmd.PersistentPreRun != nil || cmd.PersistentPreRunE != nil {
			t.Errorf("%s has its own PersistentPreRun: cobra then skips root's global-flag checks for it", name)
		}
		tc, ok := shapeCases[name]
		if !ok {
			t.Errorf("%s has no row in shapeCases: give it a good command line and bad ones", name)
			continue
		}
		verb := strings.Fields(name)
		want := cmdutil.ExitUsage
		if isPassThrough(cmd) {
			want = cmdutil.ExitCrispFailure
		}
		t.Run(name, func(t *testing.T) {
			okArgs := append(slices.Clone(verb), tc.ok...)
			if code, _, reached, err := run(t, okArgs); code != 0 || reached == nil {
				t.Errorf("crisp %s: exit %d (%v), Run reached: %v; want its options handed to RunF", strings.Join(okArgs, " "), code, err, reached != nil)
			}
			bad := slices.Clone(tc.bad)
			for _, g := range globalBad {
				flag, msg := splitWant(g)
				bad = append(bad, append(append(slices.Clone(flag), tc.ok...), append([]string{"=>"}, msg)...))
			}
			if len(tc.bad) == 0 {
				t.Error("no bad command line of its own")
			}
			for _, b := range bad {
				b, msg := splitWant(b)
				args := append(slices.Clone(verb), b...)
				code, ran, reached, err := run(t, args)
				switch {
				case reached != nil:
					t.Errorf("crisp %q reached Run; want a usage error from Validate", args)
				case code != want || !cmdutil.IsUsage(err) || ran == nil || ran.CommandPath() != cmd.CommandPath():
					t.Errorf("crisp %q: exit %d, usage %v (%v); want exit %d, a usage error of %s", args, code, cmdutil.IsUsage(err), err, want, name)
				case !strings.Contains(err.Error(), msg):
					t.Errorf("crisp %q: %v; want it to say %s", args, err, msg)
				}
			}
		})
	}
	for name := range shapeCases {
		if !seen[name] {
			t.Errorf("shapeCases has a row for %s, which root does not have", name)
		}
	}
}

// stdinRead fails the test when read: no command reads stdin before Run.
type stdinRead struct {
	t    *testing.T
	args []string
}

func (r *stdinRead) Read([]byte) (int, error) {
	r.t.Errorf("crisp %s read stdin before Run", strings.Join(r.args, " "))
	return 0, io.EOF
}

// runnable lists the commands under root that run something.
func runnable(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range root.Commands() {
		if c.Runnable() {
			out = append(out, c)
		}
		out = append(out, runnable(c)...)
	}
	return out
}

// recordingRuntime is a runtime endpoint that answers nothing and counts
// the connections made to it.
type recordingRuntime struct {
	endpoint string
	conns    atomic.Int64
}

func newRecordingRuntime(t *testing.T) *recordingRuntime {
	t.Helper()
	sock := filepath.Join(testkit.SocketDir(t), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	rt := &recordingRuntime{endpoint: "unix://" + sock}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			rt.conns.Add(1)
			_ = c.Close() // nothing is served
		}
	})
	t.Cleanup(func() {
		_ = l.Close() // ends the accept loop
		wg.Wait()
	})
	return rt
}
