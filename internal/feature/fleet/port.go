package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// The target's echo server listens on the node's network (host network),
// which every pod of the node shares: a DaemonSet's echo server, another
// crisp run, any daemon. Two busybox nc cannot listen on one port; the
// second ends at once. So a run without --port picks a port for each node
// (nodes that share a network, as test clusters' do, rarely pick the same),
// and moves a node whose port is taken to another.
const (
	// autoPortBase and autoPortSpan bound the picked ports: below the
	// kernel's ephemeral range (32768 and up) and Kubernetes' NodePort range
	// (30000-32767), above the usual daemons' ports.
	autoPortBase = 20000
	autoPortSpan = 10000
	// portTries is how many ports a node tries before it fails.
	portTries = 3
)

// pickPorts returns n distinct ports for a node to try, in order.
func pickPorts(n int) []int {
	ports := make([]int, 0, n)
	for len(ports) < n {
		p := autoPortBase + rand.IntN(autoPortSpan)
		if !containsInt(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// targetLost says whether the node's target ended because its echo server
// did (exitPortLost), with its last words from the termination message.
func (r *Runner) targetLost(pod *corev1.Pod) (bool, string) {
	st := containerStatus(pod.Status.InitContainerStatuses, targetName(r.RunID))
	if st == nil {
		return false, ""
	}
	for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
		if t != nil && t.ExitCode == exitPortLost {
			return true, lastWords(t.Message)
		}
	}
	return false, ""
}

// lastWords picks nc's complaint and the target's own line out of a
// termination message (the log's last lines, the printing loop's among
// them).
func lastWords(msg string) string {
	var words []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "nc:") || strings.HasPrefix(l, targetLastWords) {
			words = append(words, l)
		}
	}
	if len(words) == 0 {
		return "it printed no reason"
	}
	return strings.Join(words, " | ")
}

// portLost moves node n to the next port after its target could not
// listen on its own, or fails it when no port is left to try.
func (r *Runner) portLost(ctx context.Context, n *node, why string) {
	if n.attempt+1 >= len(n.ports) {
		hint := "pass --port with a port that is free on every node"
		if r.Port == 0 {
			hint = fmt.Sprintf("ports %s were tried; %s", joinInts(n.ports), hint)
		}
		r.finishWithout(n, fmt.Sprintf("the target could not listen on port %d: another process of the node holds it (the target said: %s); %s", n.port, why, hint))
		return
	}
	old, oldPort := n.pod, n.port
	if err := r.API.DeletePod(ctx, r.Namespace, old); err != nil {
		r.track.say(fmt.Sprintf("%s: deleting pod %s/%s: %v (the run's clean-up deletes it)", n.name, r.Namespace, old, err))
	}
	delete(r.byPod, old)
	n.attempt++
	n.port, n.pod, n.last, n.state = n.ports[n.attempt], podName(r.Mode, r.RunID, n.i, n.attempt), nil, ""
	r.byPod[n.pod] = n
	r.track.event(n.name, phasePending, fmt.Sprintf("port %d is taken on the node (the target said: %s); trying port %d", oldPort, why, n.port))
	if err := r.createPod(ctx, r.PodFor(n.placement(), r.smokeTimeout())); err != nil {
		r.finishWithout(n, fmt.Sprintf("creating pod %s/%s: %v", r.Namespace, n.pod, err))
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// targetListening says whether the target's echo server held its port
// while crisp ran, for a failed port-forward check: from the target's
// status when crisp's container ended.
func (r *Runner) targetListening(n *node) string {
	var st *corev1.ContainerStatus
	if n.last != nil {
		st = containerStatus(n.last.Status.InitContainerStatuses, targetName(r.RunID))
	}
	switch {
	case st == nil:
		return fmt.Sprintf("the target's status is unknown, so whether its echo server listened on port %d is too", n.port)
	case st.State.Running != nil && st.RestartCount == 0 && st.Started != nil && *st.Started:
		return fmt.Sprintf("the target's echo server was listening on port %d: running, started by its probe, never restarted", n.port)
	case st.State.Running != nil && st.RestartCount == 0:
		return fmt.Sprintf("the target was running and never restarted, but the kubelet did not count it started, so whether its echo server listened on port %d is not known (its probe failing, or the runtime not answering the kubelet)", n.port)
	}
	s := fmt.Sprintf("the target's echo server was not listening on port %d throughout: restarted %d times", n.port, st.RestartCount)
	if t := st.LastTerminationState.Terminated; t != nil {
		s += fmt.Sprintf(", last ended with exit status %d (%s)", t.ExitCode, lastWords(t.Message))
	}
	if w := st.State.Waiting; w != nil {
		s += ", now waiting: " + w.Reason
	}
	return s
}

// noteTarget adds, to each failed port-forward check of the node's
// reports, whether the target was listening: the runtime's forward can
// only reach what listens.
func (r *Runner) noteTarget(n *node) {
	for d := range n.docs {
		cells := n.docs[d].Run.Cells
		for c := range cells {
			if cells[c].Outcome == report.Fail && strings.Contains(cells[c].Check, "port-forward") {
				cells[c].Detail += "; " + r.targetListening(n)
			}
		}
	}
}
