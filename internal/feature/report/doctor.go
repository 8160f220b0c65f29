package report

import (
	"encoding/json"
	"errors"
	"fmt"
)

// doctorJSON is the JSON shape of a doctor report (docs/doctor.md, its
// schemaVersion 1), as far as merging needs it.
type doctorJSON struct {
	Mode   string `json:"mode"`
	Target struct {
		Container string `json:"container"`
	} `json:"target"`
	OK   *bool `json:"ok"`
	Hops []struct {
		Hop       string  `json:"hop"`
		Outcome   string  `json:"outcome"`
		Detail    string  `json:"detail"`
		Error     string  `json:"error"`
		Cause     string  `json:"cause"`
		LatencyMs float64 `json:"latencyMs"`
	} `json:"hops"`
	Repeat *struct {
		Runs     int `json:"runs"`
		Failures []struct {
			Hop       string  `json:"hop"`
			Signature string  `json:"signature"`
			Count     int     `json:"count"`
			Rate      float64 `json:"rate"`
		} `json:"failures"`
	} `json:"repeat"`
	Error string `json:"error"`
	// NodeSide is the node half of a workstation walk (--node-side).
	NodeSide *doctorJSON `json:"nodeSide"`
}

// parseDoctor turns each hop into a cell named MODE/HOP: a note is a pass
// (a fallback that works), a warning a warning, a failure a failure whose
// detail is the error and what it means. With --repeat, every hop that
// failed in some run fails, its detail the count and rate. A workstation
// walk's node half (--node-side) adds its node/HOP cells.
func parseDoctor(b []byte) (Run, error) {
	var d doctorJSON
	if err := json.Unmarshal(b, &d); err != nil {
		return Run{}, err
	}
	if d.Mode == "" {
		return Run{}, errors.New("no mode: not a doctor report")
	}
	run := Run{Container: d.Target.Container}
	if err := d.addCells(&run); err != nil {
		return Run{}, err
	}
	if n := d.NodeSide; n != nil {
		if n.Mode == "" || n.Mode == d.Mode {
			return Run{}, fmt.Errorf("nodeSide has mode %q: not the node half of a %s walk", n.Mode, d.Mode)
		}
		if err := n.addCells(&run); err != nil {
			return Run{}, fmt.Errorf("nodeSide: %w", err)
		}
		if n.Error != "" {
			run.Cells = append(run.Cells, Cell{Check: n.Mode + "/run", Outcome: Fail, Detail: n.Error})
		}
	}
	if len(run.Cells) == 0 {
		return Run{}, errors.New("no hops: the run did not get as far as its first hop")
	}
	if d.OK != nil && !*d.OK && run.Count(Fail) == 0 {
		// The report says it failed but shows no failed hop: trust the verdict.
		run.Cells = append(run.Cells, Cell{Check: d.Mode + "/verdict", Outcome: Fail, Detail: "the report says a hop failed but lists none"})
	}
	return run, nil
}

// addCells appends d's hops, and its failure groups, to run.
func (d *doctorJSON) addCells(run *Run) error {
	index := map[string]int{}
	for _, h := range d.Hops {
		name := d.Mode + "/" + h.Hop
		if h.LatencyMs < 0 {
			return fmt.Errorf("hop %s: latencyMs %g is negative", name, h.LatencyMs)
		}
		cell := Cell{Check: name, Detail: h.Detail, Seconds: h.LatencyMs / 1000}
		switch h.Outcome {
		case "pass", "note":
			cell.Outcome = Pass
		case "warn":
			cell.Outcome, cell.Detail = Warn, joinDetail(h.Detail, h.Cause)
		case "skip":
			cell.Outcome = Skip
		case "fail":
			cell.Outcome, cell.Detail = Fail, joinDetail(h.Error, h.Cause)
		default:
			return fmt.Errorf("hop %s: unknown outcome %q", name, h.Outcome)
		}
		index[name] = len(run.Cells)
		run.Cells = append(run.Cells, cell)
	}
	if d.Repeat == nil {
		return nil
	}
	for _, g := range d.Repeat.Failures {
		if g.Count < 0 {
			return fmt.Errorf("failures at hop %s: count %d is negative", g.Hop, g.Count)
		}
		name := d.Mode + "/" + g.Hop
		what := fmt.Sprintf("%d of %d runs (%.1f%%): %s", g.Count, d.Repeat.Runs, 100*g.Rate, g.Signature)
		i, ok := index[name]
		if !ok {
			index[name] = len(run.Cells)
			run.Cells = append(run.Cells, Cell{Check: name, Outcome: Fail, Detail: what})
			continue
		}
		if run.Cells[i].Outcome != Fail {
			run.Cells[i].Outcome, run.Cells[i].Detail = Fail, what
			continue
		}
		run.Cells[i].Detail = joinDetail(what, run.Cells[i].Detail)
	}
	return nil
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ": " + b
}
