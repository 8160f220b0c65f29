package probe

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Names of smoke's checks.
const (
	SmokeHandshake = "handshake"
	SmokeEcho      = "echo"
	SmokeSeparate  = "stdout-stderr"
	SmokeExitCode  = "exit-code"
	SmokeStdinEOF  = "stdin-eof"
	SmokeIntegrity = "integrity-16MiB"
	SmokeTTY       = "tty-resize"
	SmokeAttach    = "attach-output"
	SmokeForward   = "port-forward-round-trip"
)

// IntegritySize is what the integrity check moves through exec: 16 MiB.
const IntegritySize = 16 << 20

// SmokeCheck is one check on one call and protocol.
type SmokeCheck struct {
	Call Call `json:"call"`
	*Protocol
	// Auto is true when this is the protocol --transport auto picks, so
	// its failures fail the run.
	Auto bool `json:"auto"`
	Check
	Duration Millis `json:"durationMs"`
}

// Name is "call/transport protocol/check", the check's name in reports.
func (c SmokeCheck) Name() string {
	if c.Protocol == nil {
		return string(c.Call) + "/" + c.Check.Name
	}
	return string(c.Call) + "/" + c.String() + "/" + c.Check.Name
}

// SmokeReport is smoke's verdict.
type SmokeReport struct {
	Origin
	Container string       `json:"container"`
	Pod       string       `json:"pod"`
	Image     string       `json:"image,omitempty"`
	Strict    bool         `json:"strict"`
	Checks    []SmokeCheck `json:"checks"`
	Passed    int          `json:"passed"`
	Failed    int          `json:"failed"`
	Skipped   int          `json:"skipped"`
	Warnings  int          `json:"warnings"`
	Duration  Millis       `json:"durationMs"`
	// Error says why the run did not finish (interrupted, out of time);
	// such a run fails whatever its checks say.
	Error string `json:"error,omitempty"`
}

// OK reports whether the run passed.
func (r *SmokeReport) OK() bool { return r.Failed == 0 && r.Error == "" }

func (r *SmokeReport) add(c SmokeCheck, strict bool) {
	if c.Outcome == Fail && !c.Auto && !strict {
		c.Outcome = Warn
		c.Detail = "on a transport auto does not pick: " + c.Detail
	}
	switch c.Outcome {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	case Skip:
		r.Skipped++
	case Warn:
		r.Warnings++
	}
	r.Checks = append(r.Checks, c)
}

// Smoker runs the smoke battery.
type Smoker struct {
	URLs     URLs
	Streamer Streamer
	// Timeout bounds each check (default 30s).
	Timeout time.Duration
	// Strict makes defects on transports auto does not pick failures.
	Strict bool
	// Progress, when set, receives each check as it finishes.
	Progress func(SmokeCheck)
	// Waiting, when set, hears of handshakes slow to get an answer.
	Waiting func(format string, args ...any)
	// Gone, when set, is asked after a failed check whether the target
	// itself stopped or vanished (TargetGone); its error ends the run, so
	// that the failures are not blamed on the runtime's protocols.
	Gone func(ctx context.Context) error
}

func (s *Smoker) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 30 * time.Second
}

// Run finds the accepted protocols (a handshake-only probe) and runs the
// battery on every one of them. Failures are data in the report; the error
// is for an interrupted or impossible run.
func (s *Smoker) Run(ctx context.Context, t Target) (*SmokeReport, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &SmokeReport{Container: t.ContainerID, Pod: t.PodID, Strict: s.Strict}
	defer func() { rep.Duration = Millis(time.Since(start)) }()
	prober := &Prober{URLs: s.URLs, Streamer: s.Streamer, Timeout: s.timeout(), SkipChecks: true, Progress: s.Waiting}
	matrix, err := prober.Run(ctx, t)
	if err != nil {
		return rep, err
	}
	var gone error
	quiet := &quietWatch{}
	record := func(c SmokeCheck) {
		rep.add(c, s.Strict)
		if s.Progress != nil {
			s.Progress(rep.Checks[len(rep.Checks)-1])
		}
		if c.Outcome != Pass && c.Outcome != Skip && gone == nil && s.Gone != nil {
			gone = s.Gone(ctx)
		}
	}
	for _, row := range Matrix() {
		if gone != nil {
			return rep, gone
		}
		if err := runOver(ctx); err != nil {
			return rep, err // the handshakes that failed at the deadline found nothing of the runtime
		}
		auto, autoOK := matrix.Auto(row.Call)
		if !autoOK {
			record(SmokeCheck{Call: row.Call, Auto: true, Check: Check{Name: SmokeHandshake, Outcome: Fail,
				Detail: refusals(matrix, row.Call)}})
			continue
		}
		for _, proto := range row.Protocols {
			pr := proto
			if r, _ := matrix.result(row.Call, proto); r.TimedOut {
				record(SmokeCheck{Call: row.Call, Protocol: &pr, Check: Check{Name: SmokeHandshake, Outcome: Fail,
					Detail: "no answer to the upgrade in time, so nothing was checked: " + answer(r)}})
				continue
			}
			if !matrix.Accepted(row.Call, proto) {
				record(SmokeCheck{Call: row.Call, Protocol: &pr, Check: Check{Name: SmokeHandshake, Outcome: Skip,
					Detail: "the runtime does not speak it (" + refusal(matrix, row.Call, proto) + "), so nothing to check"}})
				continue
			}
			isAuto := proto == auto
			a := newAttempt(row.Call, pr, t, s.URLs, s.Streamer, s.timeout())
			a.quiet = quiet
			err := a.run(ctx, SuiteSmoke, func(c Check, took time.Duration) {
				record(SmokeCheck{Call: row.Call, Protocol: &pr, Auto: isAuto, Check: c, Duration: Millis(took)})
			})
			if gone != nil {
				return rep, gone
			}
			if err != nil {
				return rep, err
			}
		}
	}
	if gone != nil {
		return rep, gone
	}
	return rep, ctx.Err()
}

// notAccepted words a check's upgrade that the handshake probe had seen
// accepted: refused now, or not answered in time.
func notAccepted(hs Handshake, err error) string {
	if hs.TimedOut {
		return "the upgrade got no answer in time although an earlier attempt was accepted: " + errText(err, Result{})
	}
	return "upgrade refused although an earlier attempt was accepted: " + errText(err, Result{Status: hs.Status, Reason: hs.Reason})
}

// result is the probe's result for call and p.
func (r *ProbeReport) result(call Call, p Protocol) (Result, bool) {
	for _, res := range r.Results {
		if res.Call == call && res.Protocol == p {
			return res, true
		}
	}
	return Result{}, false
}

// refusal is the runtime's answer to one refused protocol.
func refusal(rep *ProbeReport, call Call, p Protocol) string {
	for _, r := range rep.Results {
		if r.Call == call && r.Protocol == p {
			return answer(r)
		}
	}
	return "not tried"
}

// answer words a refused result's HTTP status and reason, or its error.
func answer(r Result) string {
	switch {
	case r.Status != 0:
		why := firstLine(r.Reason)
		if strings.HasPrefix(why, fmt.Sprint(r.Status)) {
			return "HTTP " + why
		}
		return strings.TrimSpace(fmt.Sprintf("HTTP %d %s", r.Status, why))
	case r.Error != "":
		return firstLine(r.Error)
	}
	return "accepted, but not a step of the auto order"
}

// refusals describes why nothing was accepted for call, grouping the
// protocols that got the same answer.
func refusals(rep *ProbeReport, call Call) string {
	var order []string
	groups := map[string][]string{}
	for _, r := range rep.Results {
		if r.Call != call {
			continue
		}
		why := answer(r)
		if _, ok := groups[why]; !ok {
			order = append(order, why)
		}
		groups[why] = append(groups[why], r.String())
	}
	var parts []string
	for _, why := range order {
		parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(groups[why], ", "), why))
	}
	return fmt.Sprintf("the runtime accepted no protocol crisp's auto order can use for %s; %s", call, strings.Join(parts, "; "))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
