package probe

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"

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

func TestSmokePassesOnEveryProfile(t *testing.T) {
	for profile := range designProfiles {
		t.Run(profile, func(t *testing.T) {
			rep := runSmoke(t, fakeProfile(t, profile), true, 7777)
			if !rep.OK() || rep.Warnings != 0 {
				for _, c := range rep.Checks {
					if c.Outcome != Pass && c.Outcome != Skip {
						t.Errorf("%s: %s: %s", c.Name(), c.Outcome, c.Detail)
					}
				}
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
	if strict.OK() || strict.Failed != 1 {
		t.Errorf("--strict: %d failed, want the one defect", strict.Failed)
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
	f := newFake(t, func(Call, Protocol) bool { return false })
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
	if doc.Suite.Tests != len(rep.Checks) || fails != rep.Failed || fails != doc.Suite.Failures || skips != rep.Skipped || skips != doc.Suite.Skipped || fails == 0 {
		t.Errorf("JUnit tests=%d failures=%d/%d skipped=%d/%d; report %d checks, %d failed, %d skipped", doc.Suite.Tests, doc.Suite.Failures, fails, doc.Suite.Skipped, skips, len(rep.Checks), rep.Failed, rep.Skipped)
	}
}
