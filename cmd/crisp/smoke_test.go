package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/feature/report"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// The JUnit shape CI systems read, declared here independently of
// internal/feature/probe's writer.
type junitDoc struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string `xml:"name,attr"`
	ClassName string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
}

var tallyLine = regexp.MustCompile(`^(\d+) passed, (\d+) failed(, (\d+) skipped)?$`)

// lastLine returns the last line of out, which must end in a newline.
func lastLine(t *testing.T, out string) string {
	t.Helper()
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end with a newline: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestSmokeJUnitParses(t *testing.T) {
	skipInShort(t)
	fault, err := streamserver.ParseFault("drop-after=1000")
	if err != nil {
		t.Fatal(err)
	}
	env, ctr := tickerContainer(t, mockruntime.Config{Profile: streamserver.ProfileFull, Faults: []streamserver.Fault{fault}})
	port := testkit.Echo(t)
	junit := filepath.Join(t.TempDir(), "smoke.xml")
	stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", ctr, "--port", fmt.Sprint(port), "--junit", junit)
	if code != 1 {
		t.Fatalf("smoke under drop-after=1000 exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m := tallyLine.FindStringSubmatch(lastLine(t, stdout))
	if m == nil || m[2] == "0" {
		t.Fatalf("last line %q is not a tally with failures", lastLine(t, stdout))
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit file does not parse: %v\n%s", err, data)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	failures, skipped := 0, 0
	for _, c := range s.Cases {
		if c.Name == "" || c.ClassName == "" || c.Time == "" {
			t.Errorf("testcase lacks name, classname or time: %+v", c)
		}
		if c.Failure != nil {
			failures++
			if c.Failure.Message == "" {
				t.Errorf("failure without a message in %s %s", c.ClassName, c.Name)
			}
		}
		if c.Skipped != nil {
			skipped++
			if c.Skipped.Message == "" {
				t.Errorf("skipped without a reason in %s %s", c.ClassName, c.Name)
			}
		}
	}
	if s.Tests != len(s.Cases) || s.Failures != failures || s.Skipped != skipped {
		t.Errorf("suite says tests=%d failures=%d skipped=%d; its cases: %d, %d failed, %d skipped", s.Tests, s.Failures, s.Skipped, len(s.Cases), failures, skipped)
	}
	if fmt.Sprint(failures) != m[2] {
		t.Errorf("JUnit has %d failures, the tally says %s", failures, m[2])
	}
}

// leftovers lists the pods and containers the runtime still has.
func leftovers(t *testing.T, env *mocktest.Env) (pods, ctrs []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pr, err := env.CRI.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pr.Items {
		pods = append(pods, p.Id+" "+p.GetMetadata().GetName())
	}
	cr, err := env.CRI.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cr.Containers {
		ctrs = append(ctrs, c.Id+" "+c.GetMetadata().GetName())
	}
	return pods, ctrs
}

func TestSmokeImagePassesAndCleansUp(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming})
	junit := filepath.Join(t.TempDir(), "smoke.xml")
	stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "--junit", junit)
	if code != 0 {
		t.Fatalf("smoke --image busybox exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m := tallyLine.FindStringSubmatch(lastLine(t, stdout))
	if m == nil || m[2] != "0" {
		t.Fatalf("last line %q: want a tally without failures", lastLine(t, stdout))
	}
	if !strings.Contains(stdout, "PASS  attach/") {
		t.Errorf("no attach check passed on the container smoke made:\n%s", stdout)
	}
	if !strings.Contains(stderr, "created pod") || !strings.Contains(stderr, "removed container") {
		t.Errorf("stderr does not say what was created and removed:\n%s", stderr)
	}
	if pods, ctrs := leftovers(t, env); len(pods)+len(ctrs) > 0 {
		t.Errorf("smoke --image left pods %q and containers %q behind", pods, ctrs)
	}
}

func TestSmokeImageInterruptedCleansUp(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileFull})
	podCfg := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(podCfg, []byte("metadata:\n  name: ci-smoke\n  namespace: ci\n  uid: ci-smoke-1\nlabels:\n  team: runtime\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := crispCmd(t, env.Endpoint, "smoke", "--image", "busybox", "--pod-config", podCfg)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the battery is running (its first check printed).
	r := bufio.NewReader(stdout)
	first, err := r.ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill() // it may have exited already
		_ = cmd.Wait()         // killed: its status says nothing
		t.Fatalf("smoke printed no check before ending: %v\nstderr:\n%s", err, stderr.String())
	}
	pods, _ := leftovers(t, env)
	if len(pods) != 1 || !strings.HasSuffix(pods[0], " ci-smoke") {
		t.Errorf("pods while smoke --image --pod-config runs: %q, want the one named in the file (first line %q)", pods, first)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	t.Logf("interrupted after %q; stderr:\n%s", first, stderr.String())
	if code != 130 {
		t.Errorf("interrupted smoke exited %d (%v), want 130\nstdout:\n%s%s\nstderr:\n%s", code, err, first, rest, stderr.String())
	}
	if pods, ctrs := leftovers(t, env); len(pods)+len(ctrs) > 0 {
		t.Errorf("interrupted smoke --image left pods %q and containers %q behind\nstderr:\n%s", pods, ctrs, stderr.String())
	}
}

func TestSmokeImageTimeoutCleansUp(t *testing.T) {
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileFull})
	stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "--timeout", "3s")
	if !strings.Contains(stderr, "created pod") {
		t.Fatalf("the timeout struck before smoke created anything; nothing to check\nstderr:\n%s", stderr)
	}
	if code != 1 || !strings.Contains(stderr, "did not finish within --timeout 3s") {
		t.Errorf("smoke past its --timeout exited %d, want 1 with a message naming the timeout\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if pods, ctrs := leftovers(t, env); len(pods)+len(ctrs) > 0 {
		t.Errorf("smoke --image past its --timeout left pods %q and containers %q behind\nstderr:\n%s", pods, ctrs, stderr)
	}
}

// A --timeout that strikes before any check ran (while --image sets up, or
// at the first CRI call) is named as such, not blamed on --request-timeout
// or left as a bare "context deadline exceeded".
func TestSmokeTimeoutBeforeAnyCheckIsNamed(t *testing.T) {
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileFull})
	for _, timeout := range []string{"1ms", "30ms"} {
		_, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "--timeout", timeout)
		if code != 1 || !strings.Contains(stderr, "did not finish within --timeout "+timeout) || strings.Contains(stderr, "--request-timeout") {
			t.Errorf("smoke --image --timeout %s: exit %d, want 1 naming the timeout and not --request-timeout\nstderr:\n%s", timeout, code, stderr)
		}
		if pods, ctrs := leftovers(t, env); len(pods)+len(ctrs) > 0 {
			t.Errorf("smoke --image --timeout %s left pods %q and containers %q behind", timeout, pods, ctrs)
		}
	}
}

// skipInShort skips a whole probe or smoke run against the mock (seconds
// each) under -short: make test runs them, make test-short is the inner loop.
func skipInShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a whole probe or smoke run; make test runs it")
	}
}

// smoke -o json on a failure, its stdout and stderr in one stream as a
// container log keeps them: the report is the last thing written (the
// tally and the error come before it), so no stderr line can land inside
// it, and crisp report reads it whole.
func TestSmokeJSONIsLastInOneStream(t *testing.T) {
	skipInShort(t)
	fault, err := streamserver.ParseFault("refuse-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	refusing, refusingCtr := tickerContainer(t, mockruntime.Config{Profile: streamserver.ProfileFull, Faults: []streamserver.Fault{fault}})
	slow, err := streamserver.ParseFault("delay=300ms")
	if err != nil {
		t.Fatal(err)
	}
	// Slow upgrades and a short --timeout: the run is cut short, and its
	// report carries the error.
	slowEnv, slowCtr := tickerContainer(t, mockruntime.Config{Profile: streamserver.ProfileFull, Faults: []streamserver.Fault{slow}})
	for _, run := range []struct {
		endpoint string
		args     []string
	}{{refusing.Endpoint, []string{"smoke", refusingCtr, "-o", "json"}}, {slowEnv.Endpoint, []string{"smoke", slowCtr, "-o", "json", "--timeout", "3s"}}} {
		extra := run.args
		cmd := crispCmd(t, run.endpoint, run.args...)
		var both bytes.Buffer
		cmd.Stdout, cmd.Stderr = &both, &both
		if err := cmd.Run(); err == nil {
			t.Fatalf("smoke %v passed against a server refusing every upgrade:\n%s", extra, both.String())
		}
		if last := lastLine(t, both.String()); last != "}" {
			t.Errorf("smoke %v: the last line is %q, not the report's end:\n%s", extra, last, both.String())
		}
		docs, probs, err := report.Decode("log", &both)
		cutShort := len(docs) == 0 && len(probs) == 1 && strings.Contains(probs[0].Err, "did not finish within --timeout")
		if err != nil || !cutShort && (len(docs) != 1 || len(probs) != 0 || !docs[0].Run.Failed()) {
			t.Errorf("smoke %v: crisp report read %d reports, problems %v, err %v", extra, len(docs), probs, err)
		}
	}
}
