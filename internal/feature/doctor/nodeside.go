package doctor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// NodeSide runs the node walk on the pod's node and returns its report
// (crisp doctor --kubeconfig --node-side). cmd/crisp gives crisp fleet's
// way of running crisp in a pod pinned to a node: doctor cannot import
// fleet, whose merging (internal/feature/report) reads doctor's reports.
type NodeSide func(ctx context.Context, req NodeSideRequest) (*Report, error)

// NodeSideRequest is what the node half walks to: the container the
// workstation walk found, on its node, with the same flags.
type NodeSideRequest struct {
	Node        string
	ContainerID string
	Port        int32
	// Args are crisp doctor's flags that carry over: --command,
	// --hop-timeout, --repeat, --interval.
	Args []string
	// Timeout bounds the node half: its pod starting, then the walk.
	Timeout time.Duration
}

// nodeSide runs the node half once the workstation walk has found the
// pod's node and the container's ID; without them it says why not.
func (w *kubeWalker) nodeSide(ctx context.Context, run NodeSide, o *Kube) *Report {
	if w.nodeName == "" || w.containerID == "" {
		rep := newReport(ModeNode, w.nodeName)
		rep.Error = "the node side did not run: it needs the pod's node and its container's ID, and the walk through the API server did not find them (see its pod hop)"
		return rep
	}
	args := []string{"--command", strings.Join(w.cmd, " "), "--hop-timeout", w.hopTimeout.String()}
	if o.Repeat.Runs > 1 {
		args = append(args, "--repeat", fmt.Sprint(o.Repeat.Runs), "--interval", o.Repeat.Interval.String())
	}
	rep, err := run(ctx, NodeSideRequest{Node: w.nodeName, ContainerID: w.containerID, Port: w.port, Args: args,
		Timeout: 2*time.Minute + time.Duration(max(o.Repeat.Runs, 1))*(12*w.hopTimeout+o.Repeat.Interval)})
	if err != nil {
		rep = newReport(ModeNode, w.nodeName)
		rep.Error = "the node side did not report: " + err.Error()
	}
	return rep
}

// DecodeReport finds a doctor report in a container's log, where crisp's
// stderr lines may come before, after or between: the first line that
// opens a JSON object starts it.
func DecodeReport(log []byte) (*Report, error) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), len(log)+1)
	offset := 0
	for sc.Scan() {
		line := sc.Bytes()
		if strings.HasPrefix(string(line), "{") {
			var rep Report
			dec := json.NewDecoder(bytes.NewReader(log[offset:]))
			if err := dec.Decode(&rep); err == nil && rep.Kind == Kind {
				return &rep, nil
			}
		}
		offset += len(line) + 1
	}
	if len(bytes.TrimSpace(log)) == 0 {
		return nil, errors.New("no doctor report in crisp's log: the log is empty")
	}
	// What the log ends with says why: crisp's own error, or a cut report.
	tail := bytes.TrimSpace(log)
	if len(tail) > 400 {
		tail = append([]byte("..."), tail[len(tail)-400:]...)
	}
	return nil, fmt.Errorf("no doctor report in crisp's log (%d bytes); it ends: %q", len(log), tail)
}

// mergeNodeSide folds the node half into the verdict: the report is OK
// only when both halves are.
func (r *Report) mergeNodeSide() {
	if r.NodeSide != nil && !r.NodeSide.OK {
		r.OK = false
	}
}
