package main

// The harness's other commands: files, waits, TCP and exit codes.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// cmdSha256File prints the hex SHA-256 of a file, or sets a variable to it:
// sha256file [--var V] FILE.
func cmdSha256File(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sha256file")
	}
	fs := flag.NewFlagSet("sha256file", flag.ContinueOnError)
	varName := fs.String("var", "", "environment variable to set instead of printing")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 1 {
		ts.Fatalf("usage: sha256file [--var V] FILE")
	}
	f, err := os.Open(ts.MkAbs(rest[0]))
	ts.Check(err)
	defer func() { _ = f.Close() }()
	h := sha256.New()
	_, err = io.Copy(h, f)
	ts.Check(err)
	sum := hex.EncodeToString(h.Sum(nil))
	if *varName != "" {
		ts.Setenv(*varName, sum)
		return
	}
	_, _ = fmt.Fprintln(ts.Stdout(), sum)
}

// cmdGenFile writes SIZE pseudo-random bytes (same seed, same bytes):
// genfile [--seed N] FILE SIZE, SIZE like 1024, 64K, 64M.
func cmdGenFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! genfile")
	}
	fs := flag.NewFlagSet("genfile", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "random seed")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 2 {
		ts.Fatalf("usage: genfile [--seed N] FILE SIZE")
	}
	size, err := parseSize(rest[1])
	if err != nil {
		ts.Fatalf("genfile: %v", err)
	}
	f, err := os.Create(ts.MkAbs(rest[0]))
	ts.Check(err)
	rng := rand.NewChaCha8([32]byte{byte(*seed), byte(*seed >> 8), byte(*seed >> 16), byte(*seed >> 24)})
	_, err = io.CopyN(f, rng, size)
	ts.Check(err)
	ts.Check(f.Close())
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a byte count like 1024, 64K or 64M", s)
	}
	return n * mult, nil
}

// cmdWaitFor waits, within a bounded time, until a file matches a regular
// expression or a TCP address accepts connections:
//
//	waitfor [--timeout D] FILE REGEXP
//	waitfor [--timeout D] --port HOST:PORT
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! waitfor")
	}
	fs := flag.NewFlagSet("waitfor", flag.ContinueOnError)
	timeout := fs.Duration("timeout", scriptCallTimeout, "how long to wait")
	port := fs.String("port", "", "HOST:PORT to wait for")
	rest := parseFlags(ts, fs, args)
	var check func() (bool, string)
	switch {
	case *port != "" && len(rest) == 0:
		check = func() (bool, string) {
			conn, err := net.DialTimeout("tcp", *port, time.Second)
			if err != nil {
				return false, err.Error()
			}
			_ = conn.Close()
			return true, ""
		}
	case *port == "" && len(rest) == 2:
		// Multi-line, like testscript's stdout and grep: ^ and $ match at
		// line boundaries.
		re, err := regexp.Compile("(?m)" + rest[1])
		if err != nil {
			ts.Fatalf("waitfor: %v", err)
		}
		path := ts.MkAbs(rest[0])
		check = func() (bool, string) {
			data, err := os.ReadFile(path)
			if err != nil {
				return false, err.Error()
			}
			return re.Match(data), fmt.Sprintf("%s holds:\n%s", rest[0], data)
		}
	default:
		ts.Fatalf("usage: waitfor [--timeout D] FILE REGEXP | waitfor [--timeout D] --port HOST:PORT")
	}
	var last string
	if !testkit.Poll(*timeout, func() (ok bool) { ok, last = check(); return ok }) {
		ts.Fatalf("waitfor %s: not there after %s; %s", strings.Join(args, " "), *timeout, last)
	}
}

// cmdEchoServer starts a TCP echo server on loopback for the rest of the
// script (mock pods share the host's loopback, so port-forward reaches it):
// echoserver [--var V] [--addr A]. $ECHO_PORT (or $V) is its port.
// Each connection echoes until the client half-closes or closes.
func cmdEchoServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! echoserver")
	}
	fs := flag.NewFlagSet("echoserver", flag.ContinueOnError)
	varName := fs.String("var", "ECHO_PORT", "environment variable to set to the port")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if rest := parseFlags(ts, fs, args); len(rest) != 0 {
		ts.Fatalf("usage: echoserver [--var V] [--addr A]")
	}
	lis, err := net.Listen("tcp", *addr)
	ts.Check(err)
	ts.Defer(testkit.ServeEcho(lis))
	ts.Setenv(*varName, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port))
}

// cmdFreePort sets $FREE_PORT (or $V) to a loopback TCP port that was free
// a moment ago, for servers a script starts inside a container:
// freeport [--var V].
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! freeport")
	}
	fs := flag.NewFlagSet("freeport", flag.ContinueOnError)
	varName := fs.String("var", "FREE_PORT", "environment variable to set to the port")
	if rest := parseFlags(ts, fs, args); len(rest) != 0 {
		ts.Fatalf("usage: freeport [--var V]")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(*varName, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port))
	ts.Check(lis.Close())
}

// cmdTCPCopy connects to ADDR, sends IN, and writes what comes back to OUT:
// tcpcopy [--timeout D] [--n N] [--echo] ADDR IN OUT. By default it
// half-closes after sending and reads until EOF; --n N (or --echo: the size
// of IN) reads that many bytes and closes, for protocols that cannot carry a
// half-close.
func cmdTCPCopy(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("tcpcopy", flag.ContinueOnError)
	timeout := fs.Duration("timeout", scriptCallTimeout, "bound on the whole exchange")
	n := fs.Int64("n", -1, "bytes to read back (-1: until EOF)")
	echo := fs.Bool("echo", false, "read back as many bytes as were sent")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 3 {
		ts.Fatalf("usage: tcpcopy [--timeout D] [--n N] [--echo] ADDR IN OUT")
	}
	err := tcpCopy(rest[0], ts.MkAbs(rest[1]), ts.MkAbs(rest[2]), *timeout, *n, *echo)
	if neg {
		if err == nil {
			ts.Fatalf("tcpcopy %s succeeded unexpectedly", rest[0])
		}
		return
	}
	if err != nil {
		ts.Fatalf("tcpcopy: %v", err)
	}
}

func tcpCopy(addr, inPath, outPath string, timeout time.Duration, n int64, echo bool) error {
	in, err := os.ReadFile(inPath)
	if err != nil {
		return err
	}
	if echo {
		n = int64(len(in))
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	sendErr := make(chan error, 1)
	go func() {
		_, err := conn.Write(in)
		if err == nil && n < 0 {
			err = conn.(*net.TCPConn).CloseWrite()
		}
		sendErr <- err
	}()
	var out bytes.Buffer
	var r io.Reader = conn
	if n >= 0 {
		r = io.LimitReader(conn, n)
	}
	_, readErr := io.Copy(&out, r)
	if n >= 0 && int64(out.Len()) < n && readErr == nil {
		readErr = fmt.Errorf("connection closed after %d of %d bytes", out.Len(), n)
	}
	_ = conn.Close() // unblocks a Write the peer stopped reading
	if err := <-sendErr; err != nil && readErr == nil && !errors.Is(err, net.ErrClosed) {
		readErr = fmt.Errorf("sending %s: %w", inPath, err)
	}
	if werr := os.WriteFile(outPath, out.Bytes(), 0o644); werr != nil && readErr == nil {
		readErr = werr
	}
	return readErr
}

// cmdExitCode runs a program like exec and checks its exit status exactly:
// exitcode N PROG [ARGS...]. stdout and stderr are kept for the next checks.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode (say the code you expect)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdSharedPrefix reads IDs, one a line, and sets $PREFIX (or --var) to the
// shortest prefix that two or more of them share, for ambiguity tests:
// sharedprefix [--var V] FILE.
func cmdSharedPrefix(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sharedprefix")
	}
	fs := flag.NewFlagSet("sharedprefix", flag.ContinueOnError)
	varName := fs.String("var", "PREFIX", "environment variable to set")
	rest := parseFlags(ts, fs, args)
	if len(rest) != 1 {
		ts.Fatalf("usage: sharedprefix [--var V] FILE")
	}
	ids := strings.Fields(ts.ReadFile(rest[0]))
	for n := 1; ; n++ {
		seen := map[string]bool{}
		longer := false
		for _, id := range ids {
			if len(id) < n {
				continue
			}
			longer = true
			if seen[id[:n]] {
				ts.Setenv(*varName, id[:n])
				return
			}
			seen[id[:n]] = true
		}
		if !longer {
			ts.Fatalf("sharedprefix: no two of the %d IDs in %s share a prefix", len(ids), rest[0])
		}
	}
}

// TestHarnessCommands runs the helper commands on their own, so a script
// failure points at crisp, not at the harness.
func TestHarnessCommands(t *testing.T) {
	dir := t.TempDir()
	script := `
genfile in.bin 256K
genfile --seed 1 same.bin 256K
genfile --seed 2 other.bin 256K
sha256file in.bin
cp stdout in.sum
sha256file same.bin
cmp stdout in.sum
sha256file --var OTHER other.bin
exec sh -c 'test "$OTHER" != "$(cat in.sum)"'

echoserver
waitfor --port 127.0.0.1:$ECHO_PORT
tcpcopy 127.0.0.1:$ECHO_PORT in.bin out.bin
cmp in.bin out.bin
tcpcopy --echo 127.0.0.1:$ECHO_PORT in.bin echo.bin
cmp in.bin echo.bin
echoserver --var SECOND
tcpcopy --n 10 127.0.0.1:$SECOND in.bin ten.bin
exec wc -c ten.bin
stdout '^10 '

exec sh -c 'sleep 0.2; echo ready > late.txt' &
waitfor late.txt '^ready$'
wait
! exec sh -c 'exit 3'
exitcode 3 sh -c 'echo out; exit 3'
stdout '^out$'
exitcode 0 true

sharedprefix ids.txt
exec sh -c 'test "$PREFIX" = a'
sharedprefix --var P2 ids2.txt
exec sh -c 'test "$P2" = f'

-- ids.txt --
abc1
abd2
xyz3
-- ids2.txt --
f1
f2
`
	if err := os.WriteFile(filepath.Join(dir, "harness.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, scriptParams(dir))
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "64K": 64 << 10, "64M": 64 << 20, "1G": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "K", "-1", "1T", "one"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) succeeded", bad)
		}
	}
}
