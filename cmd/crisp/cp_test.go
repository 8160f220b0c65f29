package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/cp"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// runCp runs `cp args...` with o against the runtime at endpoint and
// returns the exit status Main would use.
func runCp(t testing.TB, endpoint string, o *cpOptions, errOut io.Writer, args ...string) (int, error) {
	t.Helper()
	f := &cmdutil.Factory{
		Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: errOut},
		Getenv:  func(k string) string { return map[string]string{"CRI_CONFIG_FILE": os.DevNull}[k] },
	}
	f.Global.RuntimeEndpoint = endpoint
	cmd := cpCommand(f, o)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	return cmdutil.ExitStatus(err, false), err
}

var errNoDial = errors.New("no dialling in this test")

func TestCpFlags(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		want  cp.Request
		way   cmdutil.Way
		limit int64
		bad   string
	}{
		{args: []string{"web:/etc/hosts", "."}, want: cp.Request{Container: "web", Remote: "/etc/hosts", Local: "."}, way: cmdutil.WayAuto},
		{args: []string{"--way", "root", "./x", "web:/tmp/"}, want: cp.Request{Container: "web", Remote: "/tmp/", Local: "./x", In: true}, way: cp.WayRoot},
		{args: []string{"--way", "ftp", "web:/a", "."}, bad: "unknown --way"},
		{args: []string{"web:/a"}, bad: "needs SRC and DEST"},
		{args: []string{"a", "b"}, bad: "neither"},
		{args: []string{"--tls-cert", "c.pem", "web:/a", "."}, bad: "go together"},
		{args: []string{"--size-limit", "2Gi", "web:/a", "."}, want: cp.Request{Container: "web", Remote: "/a", Local: "."}, way: cmdutil.WayAuto, limit: 2 << 30},
		{args: []string{"--size-limit", "500M", "web:/a", "."}, want: cp.Request{Container: "web", Remote: "/a", Local: "."}, way: cmdutil.WayAuto, limit: 500e6},
		{args: []string{"--size-limit", "lots", "web:/a", "."}, bad: "want a byte count"},
		{args: []string{"--size-limit", "-1Gi", "web:/a", "."}, bad: "want a byte count"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// Run stops at the dial: only the parsed options matter here.
			o := &cpOptions{deps: streamDeps{
				Settings: func() (client.Settings, error) { return client.Settings{}, nil },
				Dial:     func(client.Settings) (*client.Client, error) { return nil, errNoDial },
				Stream:   remotecommand.Stream,
			}}
			code, err := runCp(t, "unix:///nonexistent.sock", o, io.Discard, tt.args...)
			if tt.bad != "" {
				if code != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("got %d %v, want usage error with %q", code, err, tt.bad)
				}
				return
			}
			if o.req != tt.want || o.way != tt.way || o.sizeLimit != tt.limit {
				t.Fatalf("got %+v %s %d, want %+v %s %d", o.req, o.way, o.sizeLimit, tt.want, tt.way, tt.limit)
			}
			if !errors.Is(err, errNoDial) || code != cmdutil.ExitFailure {
				t.Fatalf("got %d %v, want the dial's failure (1)", code, err)
			}
		})
	}
}

// cpEnv is a mock runtime with a running container (a host process, whose
// root is the host's: paths in it are host paths).
func cpEnv(t testing.TB) (*mocktest.Env, string) {
	env := mocktest.Start(t, mockruntime.Config{})
	return env, env.RunContainer(t, env.RunPod(t, "cp"), mocktest.ContainerSpec{Name: "cp", Command: []string{"sleep", "3600"}})
}

// A large copy on a terminal ends with a full bar on stderr; off a
// terminal, nothing is drawn.
func TestCpProgressOnlyOnATerminal(t *testing.T) {
	env, ctr := cpEnv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(src, bytes.Repeat([]byte("crisp cp "), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, terminal := range []bool{true, false} {
		for _, via := range []string{"tar", "root"} {
			var errOut bytes.Buffer
			o := &cpOptions{errIsTerminal: func() bool { return terminal }}
			dst := filepath.Join(dir, via+strconv.FormatBool(terminal)+".bin")
			if _, err := runCp(t, env.Endpoint, o, &errOut, "--way", via, src, ctr+":"+dst); err != nil {
				t.Fatalf("%s: %v: %s", via, err, errOut.String())
			}
			drawn := strings.Contains(errOut.String(), "100% 18.0 MiB / 18.0 MiB")
			if drawn != terminal {
				t.Errorf("via %s, terminal %v: stderr %q", via, terminal, errOut.String())
			}
		}
	}
}

// A setuid file copied out, either way, lands without its setuid bit and
// with the umask applied; --preserve-mode keeps the bit.
func TestCpOutDropsSetuidUnlessPreserveMode(t *testing.T) {
	env, ctr := cpEnv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "tool")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o777|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	for _, via := range []string{"tar", "root"} {
		for _, preserve := range []bool{false, true} {
			dst := filepath.Join(dir, via+strconv.FormatBool(preserve))
			args := []string{"--way", via, ctr + ":" + src, dst}
			want := os.FileMode(0o777) &^ cp.CurrentUmask()
			if preserve {
				args, want = append([]string{"--preserve-mode"}, args...), 0o777|os.ModeSetuid
			}
			var errOut bytes.Buffer
			if _, err := runCp(t, env.Endpoint, &cpOptions{}, &errOut, args...); err != nil {
				t.Fatalf("%v: %v: %s", args, err, errOut.String())
			}
			st, err := os.Stat(dst)
			if err != nil || st.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != want {
				t.Errorf("cp %v: %v, %v; want %v", args, st.Mode(), err, want)
			}
		}
	}
}

// BenchmarkCpRoundTrip copies a file into the mock's container and back,
// each way, and checks the SHA-256 of what came back. Its size is
// CRISP_CP_BENCH_BYTES (make bench: 1 GiB), 64 MiB by default.
func BenchmarkCpRoundTrip(b *testing.B) {
	size := int64(64 << 20)
	if v := os.Getenv("CRISP_CP_BENCH_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("CRISP_CP_BENCH_BYTES=%q: want a positive byte count", v)
		}
		size = n
	}
	env, ctr := cpEnv(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "src.bin")
	want := writeRandom(b, src, size)
	for _, via := range []string{"tar", "root"} {
		b.Run(via, func(b *testing.B) {
			b.SetBytes(2 * size)
			for b.Loop() {
				in, back := filepath.Join(dir, via+"-in.bin"), filepath.Join(dir, via+"-back.bin")
				for _, args := range [][]string{{src, ctr + ":" + in}, {ctr + ":" + in, back}} {
					var errOut bytes.Buffer
					if _, err := runCp(b, env.Endpoint, &cpOptions{}, &errOut, append([]string{"--way", via}, args...)...); err != nil {
						b.Fatalf("cp %v: %v: %s", args, err, errOut.String())
					}
				}
				b.StopTimer()
				if got := sumFile(b, back); got != want {
					b.Fatalf("round trip via %s: sha256 %x, want %x", via, got, want)
				}
				_ = os.Remove(in)
				_ = os.Remove(back)
				b.StartTimer()
			}
		})
	}
}

// writeRandom writes size pseudo-random bytes to name and returns their SHA-256.
func writeRandom(tb testing.TB, name string, size int64) [32]byte {
	tb.Helper()
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	h := sha256.New()
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		chunk := buf[:min(int64(len(buf)), left)]
		for i := 0; i+8 <= len(chunk); i += 8 {
			binary.LittleEndian.PutUint64(chunk[i:], rng.Uint64())
		}
		h.Write(chunk)
		if _, err := f.Write(chunk); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func sumFile(tb testing.TB, name string) [32]byte {
	tb.Helper()
	f, err := os.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		tb.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}
