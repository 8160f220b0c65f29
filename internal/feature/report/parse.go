package report

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JSON shapes of smoke and probe reports (schemaVersion 1), as far as
// merging needs them.

type smokeJSON struct {
	Container string `json:"container"`
	Image     string `json:"image"`
	Checks    []struct {
		Call       string  `json:"call"`
		Transport  string  `json:"transport"`
		Protocol   string  `json:"protocol"`
		Name       string  `json:"name"`
		Outcome    Outcome `json:"outcome"`
		Detail     string  `json:"detail"`
		DurationMs float64 `json:"durationMs"`
	} `json:"checks"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Warnings int `json:"warnings"`
}

type protocolJSON struct {
	Transport string `json:"transport"`
	Protocol  string `json:"protocol"`
}

func (p protocolJSON) String() string { return p.Transport + " " + p.Protocol }

type probeJSON struct {
	Container string `json:"container"`
	Results   []struct {
		Call string `json:"call"`
		protocolJSON
		Accepted bool   `json:"accepted"`
		Status   int    `json:"status"`
		Reason   string `json:"reason"`
		Error    string `json:"error"`
		Checks   []struct {
			Name    string  `json:"name"`
			Outcome Outcome `json:"outcome"`
			Detail  string  `json:"detail"`
		} `json:"checks"`
		RPCMs     float64 `json:"rpcMs"`
		UpgradeMs float64 `json:"upgradeMs"`
	} `json:"results"`
	Summary struct {
		Auto []struct {
			Call string        `json:"call"`
			Pick *protocolJSON `json:"pick"`
			Why  string        `json:"why"`
		} `json:"auto"`
	} `json:"summary"`
}

func parseSmoke(b []byte) (Run, error) {
	var s smokeJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return Run{}, err
	}
	for name, n := range map[string]int{"passed": s.Passed, "failed": s.Failed, "skipped": s.Skipped, "warnings": s.Warnings} {
		if n < 0 {
			return Run{}, fmt.Errorf("%s is %d: a count cannot be negative", name, n)
		}
	}
	run := Run{Container: s.Container, Image: s.Image}
	fails := 0
	for _, c := range s.Checks {
		name := c.Call + "/" + c.Name
		if c.Transport != "" || c.Protocol != "" {
			name = c.Call + "/" + c.Transport + " " + c.Protocol + "/" + c.Name
		}
		switch c.Outcome {
		case Pass, Fail, Warn, Skip:
		default:
			return Run{}, fmt.Errorf("check %s: unknown outcome %q", name, c.Outcome)
		}
		if c.DurationMs < 0 {
			return Run{}, fmt.Errorf("check %s: durationMs %g is negative", name, c.DurationMs)
		}
		if c.Outcome == Fail {
			fails++
		}
		run.Cells = append(run.Cells, Cell{Check: name, Outcome: c.Outcome, Detail: c.Detail, Seconds: c.DurationMs / 1000})
	}
	if s.Failed > fails {
		// The tally says more failed than the checks show: trust the tally.
		run.Cells = append(run.Cells, Cell{Check: "smoke/verdict", Outcome: Fail,
			Detail: fmt.Sprintf("the report counts %d failed checks but lists %d", s.Failed, fails)})
	}
	if len(run.Cells) == 0 {
		return Run{}, errors.New("no checks: the run did not get as far as its first check")
	}
	return run, nil
}

// parseProbe turns each probed protocol into a cell. A failed check fails
// the node only on the protocol auto picks (what users get); a call for
// which auto picks nothing fails too. Refusals are the runtime's answer,
// not a failure.
func parseProbe(b []byte) (Run, error) {
	var p probeJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return Run{}, err
	}
	run := Run{Container: p.Container}
	picks := map[string]string{}
	for _, a := range p.Summary.Auto {
		if a.Pick == nil {
			why := a.Why
			if why == "" { // written by a crisp that did not say why
				why = "every step of its order was refused"
			}
			run.Cells = append(run.Cells, Cell{Check: a.Call + "/auto", Outcome: Fail,
				Detail: "--transport auto has nothing to pick: " + why})
			continue
		}
		picks[a.Call] = a.Pick.String()
	}
	for _, r := range p.Results {
		proto := r.String()
		cell := Cell{Check: r.Call + "/" + proto, Outcome: Pass, Seconds: (r.RPCMs + r.UpgradeMs) / 1000}
		switch {
		case !r.Accepted && r.Status != 0:
			cell.Outcome, cell.Detail = Refused, fmt.Sprintf("%d %s", r.Status, r.Reason)
		case !r.Accepted:
			cell.Outcome, cell.Detail = Error, firstLine(r.Error)
		default:
			for _, c := range r.Checks {
				if c.Outcome != Fail {
					continue
				}
				cell.Outcome = Warn
				if picks[r.Call] == proto {
					cell.Outcome = Fail
				}
				cell.Detail = c.Name + ": " + c.Detail
				break
			}
		}
		run.Cells = append(run.Cells, cell)
	}
	if len(run.Cells) == 0 {
		return Run{}, errors.New("no results")
	}
	return run, nil
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
