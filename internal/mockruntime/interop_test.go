package mockruntime_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// tool finds an external test tool named by env (the Makefile exports
// CRICTL and CRITEST). Without it the test skips, but fails under CI=true.
func tool(t *testing.T, env, how string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: crictl and critest against the mock run in make test, not in the inner loop")
	}
	path := os.Getenv(env)
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	msg := fmt.Sprintf("%s=%q: the tool is missing; %s (make deps does it)", env, path, how)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// crictl runs the real crictl against env.
type crictl struct {
	t    *testing.T
	bin  string
	env  *mocktest.Env
	conf string
}

func newCrictl(t *testing.T, env *mocktest.Env) *crictl {
	bin := tool(t, "CRICTL", "build it with `GOBIN=$PWD/.tools/bin go install sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0`")
	// A config file of its own keeps crictl away from /etc/crictl.yaml.
	conf := filepath.Join(env.Dir, "crictl.yaml")
	data := fmt.Sprintf("runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 30\n", env.Endpoint, env.Endpoint)
	if err := os.WriteFile(conf, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return &crictl{t: t, bin: bin, env: env, conf: conf}
}

func (c *crictl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"--config", c.conf}, args...)...)
	// crictl attach ignores SIGTERM: the context's end kills it.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs crictl with stdin and returns its stdout; a failure is fatal
// unless wantFail.
func (c *crictl) run(stdin string, wantFail bool, args ...string) (string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if (err != nil) != wantFail {
		c.t.Fatalf("crictl %s: %v (want failure: %v)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, wantFail, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

func (c *crictl) out(args ...string) string {
	c.t.Helper()
	out, _ := c.run("", false, args...)
	return out
}

func writeJSON(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCrictl(t *testing.T) {
	env := start(t)
	cc := newCrictl(t, env)
	dir := env.Dir
	podJSON := writeJSON(t, dir, "pod.json", fmt.Sprintf(`{"metadata":{"name":"crictl-pod","namespace":"default","uid":"crictl-uid","attempt":1},"log_directory":%q,"linux":{}}`, filepath.Join(dir, "logs")))
	ctrJSON := writeJSON(t, dir, "ctr.json", `{"metadata":{"name":"sleeper"},"image":{"image":"busybox"},"command":["sh","-c","echo started; exec sleep 1000"],"log_path":"sleeper.log","linux":{}}`)
	shJSON := writeJSON(t, dir, "sh.json", `{"metadata":{"name":"shell"},"image":{"image":"busybox"},"command":["sh"],"stdin":true,"stdin_once":true,"log_path":"shell.log","linux":{}}`)

	podID := strings.TrimSpace(cc.out("runp", podJSON))
	if len(podID) != 64 {
		t.Fatalf("runp printed %q, want a pod ID", podID)
	}
	cc.out("pull", "busybox")
	ctrID := strings.TrimSpace(cc.out("create", podID, ctrJSON, podJSON))
	if len(ctrID) != 64 {
		t.Fatalf("create printed %q, want a container ID", ctrID)
	}
	if got := strings.TrimSpace(cc.out("start", ctrID)); got != ctrID {
		t.Errorf("start printed %q, want %s", got, ctrID)
	}

	ps := cc.out("ps")
	if !regexp.MustCompile(`(?m)^` + ctrID[:13] + `\s+docker.io/library/busybox:latest\s.*\sRunning\s+sleeper\s`).MatchString(ps) {
		t.Errorf("ps lacks the running sleeper container:\n%s", ps)
	}
	if pods := cc.out("pods", "-q"); strings.TrimSpace(pods) != podID {
		t.Errorf("pods -q = %q, want %s", pods, podID)
	}

	t.Run("exec", func(t *testing.T) {
		if got := cc.out("exec", ctrID, "echo", "hello", "crictl"); got != "hello crictl\n" {
			t.Errorf("exec echo = %q", got)
		}
		out, _ := cc.run("a\nb\nc\n", false, "exec", "-i", ctrID, "wc", "-l")
		if strings.TrimSpace(out) != "3" {
			t.Errorf("exec -i wc -l of 3 lines = %q, want 3", out)
		}
		// crictl v1.37 prints ExecSync's stdout, then its stderr, both to
		// its stdout with a line of its own after each.
		out, _ = cc.run("", false, "exec", "-s", ctrID, "sh", "-c", "echo out; echo err >&2")
		if out != "out\n\nerr\n\n" {
			t.Errorf("exec -s = %q, want %q", out, "out\n\nerr\n\n")
		}
		_, errOut := cc.run("", true, "exec", ctrID, "sh", "-c", "exit 7")
		if !strings.Contains(errOut, "exit code 7") {
			t.Errorf("exec of exit 7: stderr %q, want it to name exit code 7", errOut)
		}
	})

	t.Run("attach", func(t *testing.T) {
		shID := strings.TrimSpace(cc.out("create", podID, shJSON, podJSON))
		cc.out("start", shID)
		// The shell reads commands from the attached stdin; its end
		// (stdin_once) ends the shell and the attach.
		out, _ := cc.run("echo attached-$((6*7))\n", false, "attach", "-i", shID)
		if out != "attached-42\n" {
			t.Errorf("attach -i = %q, want attached-42", out)
		}
		ps := cc.out("ps", "-a", "--name", "shell")
		if !strings.Contains(ps, "Exited") {
			t.Errorf("the shell is not exited after its stdin closed:\n%s", ps)
		}
	})

	t.Run("exec -it", func(t *testing.T) {
		// crictl needs a terminal for -t: give it one of 40 rows, 120
		// columns; the size must reach the process's terminal.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := cc.command(ctx, "exec", "-it", ctrID, "sh", "-c", "stty size; exit 3")
		tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		copied := make(chan struct{})
		go func() {
			defer close(copied)
			_, _ = io.Copy(&out, tty) // ends with EIO when crictl exits
		}()
		waitErr := cmd.Wait()
		<-copied
		_ = tty.Close()
		if !strings.Contains(out.String(), "40 120") {
			t.Errorf("exec -it stty size printed %q, want 40 120", out.String())
		}
		if waitErr == nil {
			t.Errorf("exec -it of exit 3 succeeded; want crictl to fail")
		}
	})

	t.Run("port-forward", func(t *testing.T) {
		answer := startCountServer(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := cc.command(ctx, "port-forward", podID, fmt.Sprintf("0:%d", answer))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cancel()
			_ = cmd.Wait()
		}()
		local := ""
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> ` + fmt.Sprint(answer))
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				local = m[1]
				break
			}
		}
		if local == "" {
			t.Fatalf("port-forward printed no local port; stderr:\n%s", errOut.String())
		}
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		for i, size := range []int{1, 200000} {
			got := roundTrip(t, "127.0.0.1:"+local, size)
			if want := fmt.Sprintf("got %d bytes", size); got != want {
				t.Errorf("connection %d through port-forward answered %q, want %q", i, got, want)
			}
		}
	})

	cc.out("stop", ctrID)
	if ps := cc.out("ps", "-a", "--id", ctrID); !strings.Contains(ps, "Exited") {
		t.Errorf("ps -a after stop:\n%s", ps)
	}
	if logs := cc.out("logs", ctrID); logs != "started\n" {
		t.Errorf("logs = %q, want started", logs)
	}
	cc.out("rm", ctrID)
	if ps := cc.out("ps", "-a", "-q", "--id", ctrID); strings.TrimSpace(ps) != "" {
		t.Errorf("ps after rm lists %q", ps)
	}
	cc.out("stopp", podID)
	cc.out("rmp", podID)
	if pods := cc.out("pods", "-q"); strings.TrimSpace(pods) != "" {
		t.Errorf("pods after rmp = %q", pods)
	}
}

// startCountServer listens on a free loopback port: each connection is read
// to its end (the client's half-close), answered "got N bytes" and closed.
func startCountServer(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = lis.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = c.Close() }()
				n, _ := io.Copy(io.Discard, c)
				_, _ = fmt.Fprintf(c, "got %d bytes", n)
			}()
		}
	}()
	return lis.Addr().(*net.TCPAddr).Port
}

// roundTrip sends size bytes to addr, half-closes and reads the answer.
func roundTrip(t *testing.T, addr string, size int) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(bytes.Repeat([]byte("x"), size)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read the answer from %s: %v", addr, err)
	}
	return string(got)
}
