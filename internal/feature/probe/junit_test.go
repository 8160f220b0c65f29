package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// The JUnit document agrees with smoke's verdict: a run that did not
// finish is an error, a warning is visible as a skipped case with a
// warning property, and protocol names put no dots in classnames.
func TestJUnitAgreesWithTheVerdict(t *testing.T) {
	v5 := Protocol{Transport: transport.WebSocket, Name: transport.ExecProtocolV5}
	v4 := Protocol{Transport: transport.SPDY, Name: transport.ExecProtocolV4}
	rep := &SmokeReport{}
	rep.add(SmokeCheck{Call: CallExec, Protocol: &v5, Auto: true, Check: Check{Name: SmokeEcho, Outcome: Pass}}, false)
	rep.add(SmokeCheck{Call: CallExec, Protocol: &v4, Check: Check{Name: SmokeTTY, Outcome: Fail, Detail: "lost the resize"}}, false)
	rep.Error = "smoke did not finish within --timeout 1s: context deadline exceeded"
	if rep.OK() {
		t.Error("an unfinished run is OK")
	}
	doc := rep.JUnit(time.Now())
	s := doc.Suites[0]
	if s.Errors != 1 || doc.Errors != 1 || s.Failures != 0 || s.Tests != 3 || s.Skipped != 1 {
		t.Errorf("suite errors=%d (doc %d) failures=%d tests=%d skipped=%d; want 1 error, 0 failures, 3 tests, 1 skipped (the warning)", s.Errors, doc.Errors, s.Failures, s.Tests, s.Skipped)
	}
	var warned bool
	for _, c := range s.Cases {
		if strings.Count(c.ClassName, ".") > 3 || strings.Contains(c.ClassName, "k8s") && strings.Contains(c.ClassName, ".k8s") {
			t.Errorf("classname %q splits a protocol name at its dots", c.ClassName)
		}
		if c.Skipped != nil && strings.HasPrefix(c.Skipped.Message, "WARNING: ") {
			warned = len(c.Props) == 1 && c.Props[0].Name == "warning"
		}
	}
	if !warned {
		t.Errorf("the warning is not a skipped case with a warning property: %+v", s.Cases)
	}
	if last := s.Cases[len(s.Cases)-1]; last.Error == nil || !strings.Contains(last.Error.Message, "--timeout") {
		t.Errorf("no error case for the unfinished run: %+v", last)
	}
}
