package tty

import (
	"bytes"
	"context"
	"errors"
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
// session on its standard input, a terminal, that sends itself SIGQUIT and waits to be ended.
func TestSafeQuitChild(t *testing.T) {
	if os.Getenv(quitChildEnv) != "1" {
		t.Skip("run by TestSafeRestoresOnQuit")
	}
	term := Terminal{In: os.Stdin, Out: os.Stdout}
	err := term.Safe(context.Background(), func(ctx context.Context) error {
		if err := syscall.Kill(os.Getpid(), syscall.SIGQUIT); err != nil {
			return err
		}
		<-ctx.Done() // never: SIGQUIT ends the process
		return ctx.Err()
	})
	t.Fatalf("Safe returned %v; want SIGQUIT to end the process", err)
}

// TestSafeRestoresOnQuit: SIGQUIT during a raw session keeps Go's goroutine dump and exit status
// 2, but the terminal is restored first: the settings after the process ends are the ones from
// before, and the dump was written in cooked mode (the terminal turned its newlines into CR LF,
// which raw mode does not do). The process is a re-executed test binary, since SIGQUIT ends it.
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
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
		t.Errorf("child ended with %v, want exit status 2 (Go's SIGQUIT)", err)
	}
	assertRestored(t, tty, before)
	// Once no one holds the terminal side open, reading the controlling side ends (EIO) after
	// what the child wrote.
	if err := tty.Close(); err != nil {
		t.Fatal(err)
	}
	copyErr := <-copied // EIO once the terminal side is closed: how the copy ends
	dump := out.String()
	if !regexp.MustCompile(`SIGQUIT: quit`).MatchString(dump) || !regexp.MustCompile(`goroutine \d+ `).MatchString(dump) {
		t.Fatalf("no goroutine dump on the terminal (reading it ended with %v); it shows:\n%q", copyErr, dump)
	}
	if bare := regexp.MustCompile(`[^\r]\n`).FindStringIndex(dump); bare != nil {
		t.Errorf("a newline without CR at byte %d: the dump was written while the terminal was raw:\n%q", bare[0], dump)
	}
}
