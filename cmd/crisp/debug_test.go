package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/feature/debug"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// debugWait bounds every wait in the debug tests; a guard against hangs,
// never a measurement.
const debugWait = 30 * time.Second

// Debug sessions ended by the command's exit, by Ctrl-C (SIGINT to crisp)
// and by kill -9 of crisp leave no debug container once the next run or
// `crisp debug --cleanup` has come: crisp removes its own on every way out
// it lives through, and the labels let the next one find what a killed
// crisp left. CRISP_DEBUG_SESSIONS sets the sessions per way out (the
// acceptance run uses 34, about 100 in all; the default keeps CI short).
// The target runs on untouched.
func TestDebugLeavesNoContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crisp processes; skipped under -short")
	}
	n := 3
	if s := os.Getenv("CRISP_DEBUG_SESSIONS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("CRISP_DEBUG_SESSIONS=%q: want a positive number", s)
		}
	}
	crisp := scriptCrisp.Path(t)
	env := mocktest.Start(t, mockruntime.Config{})
	pod := env.RunPod(t, "app")
	target := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "app", Image: "registry.crisp.test/distroless/app:1", Command: []string{"sleep", "3600"}})
	ctx := context.Background()

	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(crisp, append([]string{"-r", env.Endpoint, "debug", "--way", "container", "--image", mockruntime.DefaultImage}, args...)...)
		cmd.Env = append(os.Environ(), "CRI_CONFIG_FILE=/dev/null")
		return cmd
	}
	debugContainers := func() []*runtimeapi.Container {
		resp, err := env.CRI.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{debug.LabelDebug: "1"}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Containers
	}
	// interrupted starts a session running a long command, waits until its
	// debug container runs, and sends sig to crisp.
	interrupted := func(sig syscall.Signal) int {
		cmd := run(target, "--", "sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(debugWait)
		for {
			ctrs := debugContainers()
			if len(ctrs) == 1 && ctrs[0].State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("no running debug container within %s: %v", debugWait, ctrs)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err := <-waited:
			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Fatal(err)
			}
			return cmd.ProcessState.ExitCode()
		case <-time.After(debugWait):
			_ = cmd.Process.Kill()
			t.Fatalf("crisp debug did not end within %s of %s (killed: %v)", debugWait, sig, <-waited)
		}
		return -1
	}
	noneLeft := func(after string) {
		t.Helper()
		if left := debugContainers(); len(left) != 0 {
			t.Fatalf("after %s: %d debug container(s) left, e.g. %s (%s)", after, len(left), left[0].Id, left[0].Labels[debug.LabelOwner])
		}
	}

	for i := range n {
		if out, err := run(target, "--", "true").CombinedOutput(); err != nil {
			t.Fatalf("session %d ended by exit: %v\n%s", i, err, out)
		}
		noneLeft("a session that ended by exit")

		if code := interrupted(syscall.SIGINT); code != 128+int(syscall.SIGINT) {
			t.Errorf("session %d ended by SIGINT: exit %d, want %d", i, code, 128+int(syscall.SIGINT))
		}
		noneLeft("a session ended by SIGINT")

		if code := interrupted(syscall.SIGKILL); code != -1 {
			t.Errorf("session %d: crisp survived SIGKILL (exit %d)", i, code)
		}
		if len(debugContainers()) != 1 {
			t.Fatalf("session %d: a SIGKILLed crisp left %d debug containers, want the 1 it could not remove", i, len(debugContainers()))
		}
		if i%2 == 0 {
			out, err := run("--cleanup").CombinedOutput()
			if err != nil || string(out) != "removed 1 debug container(s)\n" {
				t.Fatalf("crisp debug --cleanup: %v\n%s", err, out)
			}
			noneLeft("crisp debug --cleanup")
		} else {
			// The next session removes the leftover (and its own).
			if out, err := run(target, "--", "true").CombinedOutput(); err != nil {
				t.Fatalf("the session after a kill -9: %v\n%s", err, out)
			}
			noneLeft("the session after a kill -9")
		}
	}
	st, err := env.CRI.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: target})
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("the target after the sessions: %v, %v; want it running untouched", st.GetStatus().GetState(), err)
	}
}

// A crisp in another PID namespace (the DaemonSet's hostNetwork without
// hostPID) is alive to the next crisp: the second session's sweep leaves
// the first's debug container, and the first's command finishes. Its
// liveness is its lock, not its PID (1 in its namespace).
func TestDebugSweepSparesOtherPIDNamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crisp processes; skipped under -short")
	}
	testkit.RequireRoot(t, "unshare --pid")
	crisp := scriptCrisp.Path(t)
	env := mocktest.Start(t, mockruntime.Config{})
	pod := env.RunPod(t, "app")
	target := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "app", Image: "registry.crisp.test/distroless/app:1", Command: []string{"sleep", "3600"}})
	args := func(cmd ...string) []string {
		return append([]string{"-r", env.Endpoint, "debug", "--way", "container", "--image", mockruntime.DefaultImage}, cmd...)
	}

	unshared := append([]string{"--pid", "--fork", "--mount-proc", crisp}, args("-i", target, "--", "sh", "-c", "echo STARTED; read x; echo FINISHED")...)
	first := exec.Command("unshare", unshared...)
	first.Env = append(os.Environ(), "CRI_CONFIG_FILE=/dev/null")
	stdin, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Process.Kill() }() // it may have ended
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	select {
	case l := <-lines:
		if l != "STARTED" {
			t.Fatalf("first session said %q; stderr:\n%s", l, stderr.String())
		}
	case <-time.After(debugWait):
		t.Fatalf("the first session did not start within %s; stderr:\n%s", debugWait, stderr.String())
	}

	second := exec.Command(crisp, args(target, "--", "true")...)
	second.Env = first.Env
	if out, err := second.CombinedOutput(); err != nil {
		t.Fatalf("second session: %v\n%s", err, out)
	}

	if _, err := io.WriteString(stdin, "go on\n"); err != nil {
		t.Fatalf("the first session is gone: %v; stderr:\n%s", err, stderr.String())
	}
	_ = stdin.Close()
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if err := first.Wait(); err != nil || strings.Join(rest, "\n") != "FINISHED" {
		t.Fatalf("the first session, in its own PID namespace, was cut short by the second's sweep: %v, output %q; stderr:\n%s", err, rest, stderr.String())
	}
}
