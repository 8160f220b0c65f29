package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// follow looks at a node's pod as last listed: shows a new state, and
// collects the report once crisp's container has ended.
func (r *Runner) follow(ctx context.Context, n *node) {
	pod := n.last
	if ctr := containerStatus(pod.Status.ContainerStatuses, CrispContainer); ctr != nil && ctr.State.Terminated != nil {
		r.collect(ctx, n, ctr.State.Terminated)
		return
	}
	if lost, why := r.targetLost(pod); lost && !crispStarted(pod) {
		// Before crisp started: no check ran against another process's
		// port. (Once crisp runs, its checks say what the loss did.)
		r.portLost(ctx, n, why)
		return
	}
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		// Ended without crisp's container ending (evicted, deleted).
		r.finishWithout(n, fmt.Sprintf("pod %s/%s ended (%s) before crisp did: %s", r.Namespace, n.pod, pod.Status.Phase, r.explain(ctx, n, true)))
		return
	}
	state, ph := string(pod.Status.Phase), phasePending
	if ctr := containerStatus(pod.Status.ContainerStatuses, CrispContainer); ctr != nil && ctr.State.Running != nil {
		state, ph = "running "+r.Mode, phaseRunning
	} else if w := waiting(pod); w != "" {
		state += " (" + w + ")"
	}
	if state != n.state {
		n.state = state
		r.track.event(n.name, ph, state)
	}
}

// collect reads the report from the log of crisp's container, which ended.
func (r *Runner) collect(ctx context.Context, n *node, end *corev1.ContainerStateTerminated) {
	took := time.Since(n.started).Round(100 * time.Millisecond)
	log, err := n.log, n.logErr
	n.log, n.logErr = nil, nil
	if err != nil {
		// At a thousand nodes a read fails now and then for a moment (the
		// API server restarting, a node's address missing while its status
		// is rewritten): the next poll tries again, without holding up the
		// other nodes.
		if n.logFails++; n.logFails < logTries && ctx.Err() == nil {
			return
		}
		r.finishWithout(n, fmt.Sprintf("crisp exited %d (%s) but its log could not be read (%d tries, a poll apart): %v", end.ExitCode, end.Reason, n.logFails, err))
		return
	}
	n.done = true
	r.saveLog(n, log)
	if r.OnLog != nil {
		r.OnLog(n.name, log)
	}
	source := fmt.Sprintf("%s (pod %s/%s, %s)", n.name, r.Namespace, n.pod, orUnknown(n.runtime))
	docs, probs, err := report.Decode(source, bytes.NewReader(log))
	if err != nil {
		probs = append(probs, report.Problem{Source: source, Err: err.Error()})
	}
	if len(docs) == 0 && len(probs) == 0 {
		r.finishWithout(n, fmt.Sprintf("crisp exited %d (%s) and printed no report; its log ends: %s", end.ExitCode, end.Reason, tail(log, 3)))
		return
	}
	if len(docs) == 0 {
		// Only an unreadable report (cut short by a killed pod, a schema
		// this crisp does not know): the node is failed as well, so that
		// every node asked for has its run in every output.
		why := make([]string, len(probs))
		for i, p := range probs {
			why[i] = p.Err
		}
		docs = append(docs, r.failedRun(n.name, source, fmt.Sprintf("crisp exited %d (%s) and its report could not be read: %s", end.ExitCode, end.Reason, strings.Join(why, "; "))))
	}
	n.docs, n.probs = docs, probs
	r.noteTarget(n)
	fl := report.Merge(docs, probs)
	switch {
	case !fl.OK():
		r.track.event(n.name, phaseFailed, fmt.Sprintf("FAIL after %s: %s", took, fl.Verdict()))
	case end.ExitCode != 0:
		// The report passed, the process did not: a failure either way.
		last := &n.docs[len(n.docs)-1].Run
		last.Cells = append(last.Cells, report.Cell{Check: r.Mode + "/exit", Outcome: report.Fail,
			Detail: fmt.Sprintf("crisp exited %d (%s) though its report passed", end.ExitCode, end.Reason)})
		r.track.event(n.name, phaseFailed, fmt.Sprintf("FAIL after %s: crisp exited %d (%s)", took, end.ExitCode, end.Reason))
	default:
		r.track.event(n.name, phaseOK, fmt.Sprintf("ok after %s (%s)", took, tally(fl)))
	}
}

// readLogs reads crisp's log on the nodes whose crisp container has
// ended, a few at a time: one after another, a thousand reads through the
// API server took tens of seconds of a run.
func (r *Runner) readLogs(ctx context.Context, nodes []*node) {
	sem := make(chan struct{}, logReaders)
	var wg sync.WaitGroup
	for _, n := range nodes {
		if !crispEnded(n.last) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			n.log, n.logErr = r.API.PodLog(ctx, r.Namespace, n.pod, CrispContainer, maxLog)
		}()
	}
	wg.Wait()
}

// logReaders is how many logs are read at once: the client's rate (100
// requests a second) bounds them anyway, and a node's report is tens of kB.
const logReaders = 16

// crispEnded says whether crisp's container has ended.
func crispEnded(pod *corev1.Pod) bool {
	st := containerStatus(pod.Status.ContainerStatuses, CrispContainer)
	return st != nil && st.State.Terminated != nil
}

// logTries is how often a node's log is asked for, a poll apart, before
// the node fails.
const logTries = 3

// finishWithout ends a node that has no report: it fails with why.
func (r *Runner) finishWithout(n *node, why string) {
	n.done = true
	n.docs = append(n.docs, r.failedRun(n.name, fmt.Sprintf("node %s (pod %s/%s)", n.name, r.Namespace, n.pod), why))
	r.track.event(n.name, phaseFailed, "FAIL: "+why)
}

// unfinished fails a node still going when the run ended: out of time or
// interrupted, with what its pod was doing (its events and log too when
// ask is set).
func (r *Runner) unfinished(ctx, runCtx context.Context, n *node, ask bool) {
	why := "interrupted"
	if ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		why = fmt.Sprintf("did not finish within --timeout %s", r.Timeout)
	}
	// The run's context is over: a short one of its own to ask.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	r.finishWithout(n, why+": "+r.explain(ectx, n, ask))
}

// explain says what a pod is doing, from its status, and when ask is set
// from its warning events and crisp's log.
func (r *Runner) explain(ctx context.Context, n *node, ask bool) string {
	if n.started.IsZero() {
		return fmt.Sprintf("pod %s/%s was not created (the run ended first)", r.Namespace, n.pod)
	}
	if n.last == nil {
		return fmt.Sprintf("pod %s/%s never showed up in the API server", r.Namespace, n.pod)
	}
	pod := n.last
	parts := []string{fmt.Sprintf("pod %s/%s %s", r.Namespace, n.pod, pod.Status.Phase)}
	for _, c := range pod.Status.Conditions {
		if c.Status == corev1.ConditionFalse && c.Reason != "" && c.Type == corev1.PodScheduled {
			parts = append(parts, fmt.Sprintf("%s: %s %s", c.Type, c.Reason, c.Message))
		}
	}
	if w := waiting(pod); w != "" {
		parts = append(parts, w)
	}
	for _, st := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if t := st.State.Terminated; t != nil && st.Name != CrispContainer {
			parts = append(parts, fmt.Sprintf("%s exited %d (%s) %s", st.Name, t.ExitCode, t.Reason, t.Message))
		}
	}
	if !ask {
		return strings.Join(parts, "; ")
	}
	// A node that went away during the run (its runtime or kubelet
	// stopped) says so in its Ready condition.
	if nd, err := r.API.GetNode(ctx, n.name); err == nil {
		if why := notReady(*nd); why != "" {
			parts = append(parts, why+" now")
		}
	}
	if evs, err := r.API.PodEvents(ctx, r.Namespace, n.pod); err == nil {
		var warn []string
		for _, e := range evs {
			if e.Type == corev1.EventTypeWarning {
				warn = append(warn, e.Reason+": "+strings.TrimSpace(e.Message))
			}
		}
		if len(warn) > 3 {
			warn = warn[len(warn)-3:]
		}
		if len(warn) > 0 {
			parts = append(parts, "events: "+strings.Join(warn, "; "))
		}
	}
	if ctr := containerStatus(pod.Status.ContainerStatuses, CrispContainer); ctr != nil && ctr.State.Running != nil {
		if log, err := r.API.PodLog(ctx, r.Namespace, n.pod, CrispContainer, 64<<10); err == nil && len(log) > 0 {
			parts = append(parts, "crisp's log ends: "+tail(log, 2))
		}
	}
	return strings.Join(parts, "; ")
}

// waiting names the containers that wait, with the kubelet's reason.
func waiting(pod *corev1.Pod) string {
	var ws []string
	for _, st := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if w := st.State.Waiting; w != nil {
			s := st.Name + " waiting: " + w.Reason
			if w.Message != "" {
				s += " " + w.Message
			}
			ws = append(ws, s)
		}
	}
	return strings.Join(ws, ", ")
}

// crispStarted says whether crisp's container has run.
func crispStarted(pod *corev1.Pod) bool {
	st := containerStatus(pod.Status.ContainerStatuses, CrispContainer)
	return st != nil && (st.State.Running != nil || st.State.Terminated != nil)
}

func containerStatus(sts []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range sts {
		if sts[i].Name == name {
			return &sts[i]
		}
	}
	return nil
}

// tail returns the last n non-empty lines of log, joined by " | ".
func tail(log []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

// tally counts a passing node's checks for its progress line.
func tally(f *report.Fleet) string {
	var pass, warn int
	for _, r := range f.Runs {
		pass += r.Count(report.Pass)
		warn += r.Count(report.Warn)
	}
	return fmt.Sprintf("%d passed, %d warnings", pass, warn)
}
