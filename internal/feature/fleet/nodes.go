package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// A node whose runtime or kubelet stops during the run fails once it has
// been seen not Ready for notReadyGrace, not at --timeout: waiting longer
// tells the user nothing more. The grace outlasts a kubelet's restart;
// nodes are read every 15 s, a second more per hundred nodes (one list).
const (
	defaultNodeCheck     = 15 * time.Second
	defaultNotReadyGrace = 45 * time.Second
)

// pickNodes returns the nodes to run on, with their runtimes and sockets;
// nodes that cannot take a pod (named but absent, not Ready, no socket
// known) are failed at once, as runs of their own.
func (r *Runner) pickNodes(ctx context.Context) (picked []*node, failed []report.Doc, err error) {
	sockets, err := ParseSockets(r.RuntimeSocket)
	if err != nil {
		return nil, nil, err
	}
	var nodes []corev1.Node
	if len(r.Nodes) > 0 {
		seen := map[string]bool{}
		for _, name := range r.Nodes {
			if seen[name] {
				continue // one pod per node: they would share the target's port
			}
			seen[name] = true
			n, err := r.API.GetNode(ctx, name)
			switch {
			case errors.Is(err, ErrNotFound):
				failed = append(failed, r.failedRun(name, "", "no such node in the cluster"))
				r.track.event(name, phaseFailed, "FAIL: no such node")
				continue
			case err != nil:
				return nil, nil, fmt.Errorf("getting node %s: %w", name, err)
			}
			nodes = append(nodes, *n)
		}
	} else {
		if nodes, err = r.API.ListNodes(ctx, r.Selector); err != nil {
			return nil, nil, fmt.Errorf("listing nodes (selector %q): %w", r.Selector, err)
		}
		if len(nodes) == 0 {
			return nil, nil, fmt.Errorf("no node matches the selector %q (kubectl get nodes -l %q shows the same)", r.Selector, r.Selector)
		}
	}
	for _, n := range nodes {
		_, version := runtimeOf(n)
		r.runtimes[n.Name] = version
		socket, serr := sockets.socketFor(n)
		why := notReady(n)
		if why == "" && serr != nil {
			why = serr.Error()
		}
		if why != "" {
			failed = append(failed, r.failedRun(n.Name, "", why))
			r.track.event(n.Name, phaseFailed, "FAIL: "+why)
			continue
		}
		picked = append(picked, &node{name: n.Name, runtime: version, socket: socket})
	}
	return picked, failed, nil
}

// checkNodes reads the Ready condition of the nodes still going (one list,
// or one read per node named with --nodes) and fails those not Ready for
// grace. A read that fails changes nothing: the next one tries
// again, and --timeout still bounds the run.
func (r *Runner) checkNodes(ctx context.Context, nodes []*node, grace time.Duration) {
	current := map[string]corev1.Node{}
	if len(r.Nodes) > 0 {
		for _, n := range nodes {
			if n.done {
				continue
			}
			if nd, err := r.API.GetNode(ctx, n.name); err == nil {
				current[n.name] = *nd
			}
		}
	} else {
		list, err := r.API.ListNodes(ctx, r.Selector)
		if err != nil {
			return
		}
		for _, nd := range list {
			current[nd.Name] = nd
		}
	}
	now := time.Now()
	for _, n := range nodes {
		nd, ok := current[n.name]
		if n.done || !ok {
			continue
		}
		why := notReady(nd)
		switch {
		case why == "":
			n.notReadySince = time.Time{}
		case n.notReadySince.IsZero():
			n.notReadySince = now
		case now.Sub(n.notReadySince) >= grace:
			r.finishWithout(n, fmt.Sprintf("%s for %s during the run: %s", why, now.Sub(n.notReadySince).Round(time.Second), r.explain(ctx, n, false)))
		}
	}
}

// notReady says why a node cannot run the check, or "".
func notReady(n corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return ""
			}
			return fmt.Sprintf("the node is not Ready (%s: %s)", c.Reason, c.Message)
		}
	}
	return "the node reports no Ready condition"
}
