package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"demo":                   "demo",
		"--port":                 "--port",
		":8080":                  ":8080",
		"unix:///tmp/x.sock":     "unix:///tmp/x.sock",
		"":                       "''",
		"echo hi; exit 3":        "'echo hi; exit 3'",
		"it's":                   `'it'\''s'`,
		`a\nb`:                   `'a\nb'`,
		"while :; do date; done": "'while :; do date; done'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// A runner whose every step command fails (setting up and cleaning up
// work): every step that runs a command fails and says so, the one that
// streams by itself (the TTY size) passes, the demo returns a
// *StepsFailedError, and nothing is left behind. The runner gets the
// mock's endpoint and the demo's own config file.
func TestRunReportsFailedSteps(t *testing.T) {
	var out, errOut testkit.LockedBuffer
	var calls []Invocation
	runner := func(ctx context.Context, inv Invocation) (int, error) {
		calls = append(calls, inv)
		switch inv.Args[2] {
		case "run":
			return fakeRun(ctx, inv)
		case "logs", "rmp":
			return 0, nil
		}
		_, _ = fmt.Fprintln(inv.Out, "crisp: boom")
		return 1, errors.New("boom")
	}
	err := Run(context.Background(), Config{
		Profile: streamserver.ProfileFull, Out: &out, ErrOut: &errOut, Run: runner,
		StepTimeout: 3 * time.Second, ProbeTimeout: 3 * time.Second, // the attach and port-forward steps wait this long for output that never comes
	})
	transcript := out.String()
	var failed *StepsFailedError
	if !errors.As(err, &failed) || failed.Failed != 5 || failed.Total != 6 {
		t.Fatalf("Run error %v, want 5 of 6 steps failed\n%s", err, transcript)
	}
	for _, want := range []string{
		"FAILED: step 1 (probe: ",
		"FAILED: step 2 (exec: ",
		"ok: the remote terminal is 40 rows by 120 columns",
		"crisp demo: 5 of 6 steps failed: step 1 (probe), step 2 (exec), step 3 (exec -i), step 5 (attach), step 6 (port-forward)",
	} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, transcript)
		}
	}
	if len(calls) == 0 {
		t.Fatal("the runner was never called")
	}
	if inv := calls[0]; len(inv.Args) < 3 || inv.Args[0] != "-r" || !strings.HasPrefix(inv.Args[1], "unix://") || inv.Args[2] != "run" {
		t.Errorf("first command line %q, want -r unix://... run ...", inv.Args)
	}
	inv := calls[len(calls)-1]
	if last := inv.Args[2:]; len(last) != 3 || last[0] != "rmp" || last[1] != "-f" || last[2] != PodName {
		t.Errorf("last command line %q, want rmp -f %s", inv.Args, PodName)
	}
	if _, statErr := os.Stat(inv.ConfigFile); !errors.Is(statErr, fs.ErrNotExist) {
		t.Errorf("the demo's config file %s is still there (stat: %v)", inv.ConfigFile, statErr)
	}
}

// Cancelled before it starts, the demo stops and says why.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut testkit.LockedBuffer
	err := Run(ctx, Config{Profile: streamserver.ProfileFull, Out: &out, ErrOut: &errOut,
		Run: func(context.Context, Invocation) (int, error) { return 0, nil }, StepTimeout: time.Second, ProbeTimeout: time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error %v, want context.Canceled", err)
	}
}

// fakeRun stands in for `crisp run CTR POD`: it makes the demo's pod and
// container through the CRI API and prints the container's ID.
func fakeRun(ctx context.Context, inv Invocation) (int, error) {
	cli, err := client.Dial(client.Settings{RuntimeEndpoint: inv.Args[1], ImageEndpoint: inv.Args[1], RequestTimeout: client.DefaultRequestTimeout})
	if err != nil {
		return 1, err
	}
	defer func() { _ = cli.Close() }() // a test's connection to a mock
	podCfg := client.PodConfig(PodName, "default", "", nil)
	podID, err := cli.RunPod(ctx, podCfg, "")
	if err != nil {
		return 1, err
	}
	ctrID, err := cli.CreateContainer(ctx, podID, client.ContainerConfig(ContainerName, mockruntime.DefaultImage, []string{"sleep", "60"}, false, true), podCfg)
	if err != nil {
		return 1, err
	}
	if err := cli.StartContainer(ctx, ctrID); err != nil {
		return 1, err
	}
	_, err = fmt.Fprintln(inv.Out, ctrID)
	return 0, err
}
