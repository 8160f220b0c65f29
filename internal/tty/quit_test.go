package tty

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
)

// quitChildEnv makes this test binary, re-executed by TestSafeRestoresOnQuit, run a session that
// receives SIGQUIT.
const quitChildEnv = "CRISP_TTY_QUIT_CHILD"

// TestSafeQuitChild is the child of TestSafeRestoresOnQuit (it does nothing in a normal run): a
// session on its standard input, a terminal, that sends itself SIGQUIT, then exits with the status
// the error it gets back carries, as crisp's main does.
func TestSafeQuitChild(t *testing.T) {
	if os.Getenv(quitChildEnv) != "1" {
		t.Skip("run by TestSafeRestoresOnQuit")
	}
	term := Terminal{In: os.Stdin, Out: os.Stdout}
	err := term.Safe(context.Background(), func(ctx context.Context) error {
		if err := syscall.Kill(os.Getpid(), syscall.SIGQUIT); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	})
	var sig *SignalError
	if !errors.As(err, &sig) {
		t.Fatalf("Safe returned %v; want a *SignalError", err)
	}
	fmt.Println("ended by", sig.Signal)
	os.Exit(sig.ExitCode()) //nolint:forbidigo // the child process stands for crisp's main
}

// TestSafeRestoresOnQuit: SIGQUIT during a raw session ends it as SIGINT does: the terminal is
// restored (the settings after the process ends are the ones from before), the exit status is the
// shell's 128+3 = 131, and no goroutine dump lands on the user's terminal. The process is a
// re-executed test binary, since it exits.
func TestSafeRestoresOnQuit(t *testing.T) {
	if os.Getenv(quitChildEnv) == "1" {
		t.Skip("in the child")
	}
	tty, ptmx, before := cookedPTYPair(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestSafeQuitChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), quitChildEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	var out bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&out, ptmx)
		copied <- err
	}()
	err := cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 131 {
		t.Errorf("child ended with %v, want exit status 131 (128 + SIGQUIT)", err)
	}
	assertRestored(t, tty, before)
	if err := tty.Close(); err != nil {
		t.Fatal(err)
	}
	copyErr := <-copied // EIO once the terminal side is closed: how the copy ends
	shown := out.String()
	if !regexp.MustCompile(`ended by quit`).MatchString(shown) {
		t.Errorf("the child did not say SIGQUIT ended it (reading ended with %v):\n%q", copyErr, shown)
	}
	if regexp.MustCompile(`SIGQUIT: quit|goroutine \d+ `).MatchString(shown) {
		t.Errorf("a goroutine dump on the terminal:\n%q", shown)
	}
}
