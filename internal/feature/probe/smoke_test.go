package probe

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

func runSmoke(t *testing.T, f *fakeRuntime, strict bool, port int32) *SmokeReport {
	t.Helper()
	s := &Smoker{URLs: f, Streamer: f, Strict: strict, Timeout: 5 * time.Second}
	rep, err := s.Run(context.Background(), Target{ContainerID: "c1", PodID: "p1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func findCheck(rep *SmokeReport, name string) (SmokeCheck, bool) {
	for _, c := range rep.Checks {
		if c.Name() == name {
			return c, true
		}
	}
	return SmokeCheck{}, false
}

// v1ResetByCRIStreaming is the one defect smoke finds on the mock's
// profiles: they serve SPDY channel.k8s.io with cri-streaming's handler,
// which resets v1's error stream before the command runs (as containerd
// and CRI-O do), so v1's exit status never arrives. smoke says so.
func v1ResetByCRIStreaming(c SmokeCheck) bool {
	return c.Name() == "exec/spdy "+transport.ExecProtocolV1+"/"+SmokeExitCode && strings.Contains(c.Detail, "reset v1's error stream")
}

func TestSmokePassesOnEveryProfile(t *testing.T) {
	for profile := range designProfiles {
		t.Run(profile, func(t *testing.T) {
			f := fakeProfile(t, profile)
			rep := runSmoke(t, f, true, f.echoPort)
			for _, c := range rep.Checks {
				if c.Outcome != Pass && c.Outcome != Skip && !v1ResetByCRIStreaming(c) {
					t.Errorf("%s: %s: %s", c.Name(), c.Outcome, c.Detail)
				}
			}
			if lenient := runSmoke(t, f, false, f.echoPort); !lenient.OK() {
				t.Errorf("without --strict the run failed: %d failed", lenient.Failed)
			}
			if rep.Passed+rep.Failed+rep.Skipped+rep.Warnings != len(rep.Checks) {
				t.Errorf("tally %d+%d+%d+%d does not add up to %d checks", rep.Passed, rep.Failed, rep.Skipped, rep.Warnings, len(rep.Checks))
			}
			for _, c := range rep.Checks {
				if c.Outcome == Skip && c.Detail == "" {
					t.Errorf("%s skipped without a reason", c.Name())
				}
			}
		})
	}
}

func TestSmokeDefectOffAutoIsAWarningUnlessStrict(t *testing.T) {
	f := fakeProfile(t, "cri-streaming")
	f.lostExit = map[Protocol]bool{{Transport: transport.WebSocket, Name: transport.ExecProtocolV4}: true}
	rep := runSmoke(t, f, false, 0)
	c, ok := findCheck(rep, "exec/websocket v4.channel.k8s.io/exit-code")
	if !ok || c.Outcome != Warn || !strings.Contains(c.Detail, "reported exit 0, want 7") {
		t.Errorf("lost exit code on WebSocket v4 (auto picks SPDY): %+v, want a warning quoting the behaviour", c)
	}
	if !rep.OK() {
		t.Errorf("a defect off the auto transport failed the run")
	}
	if c, _ := findCheck(rep, "port-forward/spdy portforward.k8s.io/port-forward-round-trip"); c.Outcome != Skip || !strings.Contains(c.Detail, "--port") {
		t.Errorf("without --port the round trip must be skipped saying why: %+v", c)
	}

	strict := runSmoke(t, f, true, 0)
	var failed []string
	for _, c := range strict.Checks {
		if c.Outcome == Fail && !v1ResetByCRIStreaming(c) {
			failed = append(failed, c.Name()+": "+c.Detail)
		}
	}
	if strict.OK() || len(failed) != 1 || !strings.HasPrefix(failed[0], "exec/websocket v4.channel.k8s.io/exit-code: ") {
		t.Errorf("--strict: failed %q (and %d in all), want the one defect", failed, strict.Failed)
	}
}

func TestSmokeDefectOnAutoFails(t *testing.T) {
	f := fakeProfile(t, "cri-streaming")
	f.lostExit = map[Protocol]bool{{Transport: transport.SPDY, Name: transport.ExecProtocolV4}: true}
	rep := runSmoke(t, f, false, 0)
	c, ok := findCheck(rep, "exec/spdy v4.channel.k8s.io/exit-code")
	if !ok || c.Outcome != Fail || !c.Auto {
		t.Errorf("lost exit code on the auto transport: %+v, want a failure", c)
	}
	if rep.OK() {
		t.Error("run passed")
	}
}

func TestSmokeNothingAccepted(t *testing.T) {
	f := newFake(t, streamserver.Config{Faults: []streamserver.Fault{{Kind: "refuse-upgrade"}}})
	rep := runSmoke(t, f, false, 0)
	if rep.Failed != 3 || len(rep.Checks) != 3 {
		t.Fatalf("got %d checks, %d failed; want one failed handshake per call", len(rep.Checks), rep.Failed)
	}
	if !strings.Contains(rep.Checks[0].Detail, "HTTP 403") {
		t.Errorf("handshake failure does not quote the refusal: %s", rep.Checks[0].Detail)
	}
}

func TestJUnitShape(t *testing.T) {
	f := fakeProfile(t, "legacy")
	f.lostExit = map[Protocol]bool{{Transport: transport.SPDY, Name: transport.ExecProtocolV2}: true}
	rep := runSmoke(t, f, false, 0)
	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suite struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	fails, skips := 0, 0
	for _, c := range doc.Suite.Cases {
		if c.Failure != nil {
			fails++
		}
		if c.Skipped != nil {
			skips++
		}
	}
	// Warnings are skipped cases (junit.go).
	if doc.Suite.Tests != len(rep.Checks) || fails != rep.Failed || fails != doc.Suite.Failures || skips != rep.Skipped+rep.Warnings || skips != doc.Suite.Skipped || fails == 0 {
		t.Errorf("JUnit tests=%d failures=%d/%d skipped=%d/%d; report %d checks, %d failed, %d skipped, %d warnings", doc.Suite.Tests, doc.Suite.Failures, fails, doc.Suite.Skipped, skips, len(rep.Checks), rep.Failed, rep.Skipped, rep.Warnings)
	}
}

// A quiet main process costs smoke one full attach window: the first
// protocol waits 3 s, the later ones a handshake's second, and say which
// protocol saw nothing first. Probe does the same with its 2 s window.
func TestQuietContainerWaitsOneFullWindow(t *testing.T) {
	f := fakeProfile(t, "legacy") // two attach protocols; the fewest checks
	target := Target{ContainerID: "quiet1", PodID: "p1"}
	s := &Smoker{URLs: f, Streamer: f, Timeout: 5 * time.Second}
	rep, err := s.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	var smokeDetails []string
	for _, c := range rep.Checks {
		if c.Call == CallAttach && c.Name() != "" && strings.HasSuffix(c.Name(), "/"+SmokeAttach) {
			if c.Outcome != Skip {
				t.Errorf("%s: %s, want a skip: %s", c.Name(), c.Outcome, c.Detail)
			}
			smokeDetails = append(smokeDetails, c.Detail)
		}
	}
	checkQuietDetails(t, "smoke", smokeDetails, "3s")

	p := &Prober{URLs: f, Streamer: f, Timeout: 5 * time.Second, Calls: []Call{CallAttach}}
	prep, err := p.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	var probeDetails []string
	for _, r := range prep.Results {
		for _, c := range r.Checks {
			if c.Outcome == Skip && strings.Contains(c.Detail, "printed nothing") {
				probeDetails = append(probeDetails, c.Detail)
			}
		}
	}
	checkQuietDetails(t, "probe", probeDetails, "2s")
}

// checkQuietDetails: the first skip waited the full window, every later one
// a second and names the first protocol's window.
func checkQuietDetails(t *testing.T, who string, details []string, full string) {
	t.Helper()
	if len(details) < 2 {
		t.Fatalf("%s: %d quiet attach skips, want one per attach protocol (several): %q", who, len(details), details)
	}
	if want := "printed nothing within " + full; !strings.Contains(details[0], want) || strings.Contains(details[0], "nor within") {
		t.Errorf("%s: first skip %q, want %q alone", who, details[0], want)
	}
	for _, d := range details[1:] {
		if want := "printed nothing within 1s (nor within " + full + " over "; !strings.Contains(d, want) {
			t.Errorf("%s: later skip %q, want %q", who, d, want)
		}
	}
}
