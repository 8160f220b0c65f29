// Package fleet runs crisp smoke, probe or doctor on many Kubernetes nodes from a
// workstation: one pod per node, created through the API server and
// pinned to its node, holding crisp and a target container the kubelet
// owns; it follows the pods, reads each node's report from its log as the
// node finishes, and merges the reports with internal/feature/report. Everything
// it creates carries its run's label and is deleted on every way out.
//
// It knows the Kubernetes API through the API interface (kube.go serves
// it with client-go's REST client and the core/v1 types alone, never the
// full clientset), and writes only to the writer it is given.
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// Modes: what runs on each node.
const (
	ModeSmoke  = "smoke"
	ModeProbe  = "probe"
	ModeDoctor = "doctor"
)

// Modes lists the modes, in the order help names them.
var Modes = []string{ModeSmoke, ModeProbe, ModeDoctor}

// The defaults of a run: crisp's image as `make image` tags it, the
// target's busybox, and a namespace that admits host-network pods with a
// hostPath.
const (
	DefaultImage       = "crisp:dev"
	DefaultTargetImage = "busybox:1.36"
	DefaultNamespace   = "kube-system"
)

// Config is what a run does.
type Config struct {
	Mode      string // one of Modes
	Namespace string
	// Selector (node labels) or Nodes picks the nodes.
	Selector string
	Nodes    []string
	// Image is crisp's image, TargetImage busybox's (the target runs
	// `nc -ll -p PORT -e cat`).
	Image, TargetImage string
	// RuntimeSocket is the runtime's socket on the nodes: PATH,
	// RUNTIME=PATH pairs, or "" to find each node's (ParseSockets).
	RuntimeSocket string
	// Port is the target's echo port, on the node's network (host
	// network: every pod of the node shares it). 0 picks one per node and
	// another where that one is taken.
	Port      int
	Timeout   time.Duration
	ExtraArgs []string // passed to smoke, probe or doctor
	RunID     string   // generated when empty
	Poll      time.Duration
	// SaveLogs, when set, is a folder for each node's crisp log
	// (NODE.MODE.log), as read.
	SaveLogs string
	// Target, in doctor mode, is a container of the node's runtime (its
	// ID) to walk the path to instead of a target of the run's own: no
	// sidecar is made, and Port (0: none) is that container's pod's.
	// crisp doctor --kubeconfig --node-side runs this way.
	Target string
}

// API is the part of the Kubernetes API a run uses.
type API interface {
	ListNodes(ctx context.Context, selector string) ([]corev1.Node, error)
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	CreatePod(ctx context.Context, pod *corev1.Pod) error
	DeletePod(ctx context.Context, namespace, name string) error
	ListPods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error)
	DeletePods(ctx context.Context, namespace, selector string) error
	// PodLog returns at most limit bytes of a container's log.
	PodLog(ctx context.Context, namespace, pod, container string, limit int64) ([]byte, error)
	PodEvents(ctx context.Context, namespace, pod string) ([]corev1.Event, error)
}

// ErrNotFound is what API methods wrap when the object does not exist.
var ErrNotFound = errors.New("not found")

// Runner runs one fleet check.
type Runner struct {
	Config
	API API
	// Progress gets the run's progress: a line per node state change, or
	// with Live (a terminal) one summary line redrawn in place.
	Progress io.Writer
	Live     bool
	track    *tracker

	count    *counted
	byPod    map[string]*node
	nodes    []*node
	runtimes map[string]string // by node, as it reports it: containerd://1.6.20
	// pick picks the ports a node tries when Port is 0 (pickPorts; tests
	// replace it).
	pick func(n int) []int
	// OnLog, when set, gets each node's crisp log as read.
	OnLog func(node string, log []byte)
	// nodeCheck is how often the nodes' Ready conditions are read during
	// the run, and notReadyGrace how long a node stays not Ready before it
	// fails (zero: defaultNodeCheck and defaultNotReadyGrace; tests
	// shorten them).
	nodeCheck, notReadyGrace time.Duration
}

// maxLog bounds the log read from each node: a report is tens of kB.
const maxLog = 16 << 20

// maxExplained bounds the nodes whose events and log are read when the run
// ends before they do (each is two requests); the others are described
// from their pod's status alone.
const maxExplained = 20

// node is one node's progress through the run.
type node struct {
	name     string
	pod      string
	i        int
	state    string // the last state shown
	runtime  string // as the node reports it: containerd://1.6.20
	socket   string // the runtime's, on the node
	port     int    // the target's
	ports    []int  // to try, in order
	logFails int    // failed reads of crisp's log
	attempt  int    // index in ports
	done     bool
	started  time.Time
	// notReadySince is when the node was first seen not Ready in a row
	// of checks (zero: Ready when last read).
	notReadySince time.Time
	last          *corev1.Pod // as last listed
	// log and logErr are crisp's log, read once its container ended and
	// held until collect takes them.
	log    []byte
	logErr error
	docs   []report.Doc
	probs  []report.Problem
}

// Run checks every selected node and returns the merged fleet. The error
// is for a run that could not start (no API server, no node) or was
// interrupted (ctx cancelled: the fleet then holds what finished); nodes
// that fail or run out of time are failures in the fleet, not errors.
// Whatever happens, the pods it created are deleted before it returns.
func (r *Runner) Run(ctx context.Context) (fleet *report.Fleet, err error) {
	if r.RunID == "" {
		r.RunID = newRunID()
	}
	start := time.Now()
	r.track = newTracker(r.Progress, r.Live, r.Mode)
	r.runtimes = map[string]string{}
	if r.count == nil {
		r.count = &counted{API: r.API, n: map[string]int{}}
		r.API = r.count
	}
	defer r.track.finish()
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if r.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, r.Timeout)
	}
	defer cancel()

	picked, early, err := r.pickNodes(runCtx)
	if err != nil {
		return nil, err
	}
	r.track.expect(len(picked) + len(early))
	if r.Poll <= 0 {
		// One list of the run's pods per poll: a second apart, and a
		// second more per two hundred nodes, so that a thousand nodes do
		// not have the API server encode megabytes every second (at one
		// more per hundred, 1000 nodes waited up to 11 s to be seen done).
		r.Poll = time.Second * time.Duration(1+len(picked)/200)
	}
	r.warnLeftovers(runCtx)
	if r.pick == nil {
		r.pick = pickPorts
	}
	nodes := make([]*node, len(picked))
	r.byPod = map[string]*node{}
	for i, n := range picked {
		ports := []int{r.Port}
		if r.Port == 0 && r.Target == "" {
			ports = r.pick(portTries)
		}
		n.pod, n.i, n.ports, n.port = podName(r.Mode, r.RunID, i, 0), i, ports, ports[0]
		nodes[i] = n
		r.byPod[n.pod] = n
	}
	r.nodes = nodes
	defer func() { err = errors.Join(err, r.cleanup(ctx)) }()
	r.createPods(runCtx, nodes)

	nodeCheck, grace := r.nodeCheck, r.notReadyGrace
	if nodeCheck <= 0 {
		nodeCheck = defaultNodeCheck + time.Second*time.Duration(len(picked)/100)
	}
	if grace <= 0 {
		grace = defaultNotReadyGrace
	}
	lastNodeCheck := time.Now()
	tick := time.NewTicker(r.Poll)
	defer tick.Stop()
	for !allDone(nodes) && runCtx.Err() == nil {
		if time.Since(lastNodeCheck) >= nodeCheck {
			lastNodeCheck = time.Now()
			r.checkNodes(runCtx, nodes, grace)
		}
		pods, lerr := r.API.ListPods(runCtx, r.Namespace, RunLabel+"="+r.RunID)
		if lerr != nil && runCtx.Err() == nil {
			r.track.say(fmt.Sprintf("listing pods: %v (trying again)", lerr))
		}
		seen := make([]*node, 0, len(pods))
		for i := range pods {
			n := r.byPod[pods[i].Name]
			if n == nil || n.done {
				continue
			}
			// A copy: a pointer into pods would keep the whole list, every
			// node's pod, alive for as long as this node is remembered.
			pod := pods[i]
			n.last = &pod
			seen = append(seen, n)
		}
		r.readLogs(runCtx, seen)
		for _, n := range seen {
			r.follow(runCtx, n)
			if n.done {
				n.last = nil // its report is what the merge needs
			}
		}
		select {
		case <-runCtx.Done():
		case <-tick.C:
		}
	}
	asked := 0
	for _, n := range nodes {
		if !n.done {
			// Events and logs for a few nodes say enough; after Ctrl-C,
			// none: the user is waiting for the clean-up.
			ask := ctx.Err() == nil && asked < maxExplained
			asked++
			r.unfinished(ctx, runCtx, n, ask)
		}
	}
	docs := early
	var probs []report.Problem
	for _, n := range nodes {
		docs, probs = append(docs, n.docs...), append(probs, n.probs...)
	}
	fleet = report.Merge(docs, probs)
	if ctx.Err() != nil {
		return fleet, fmt.Errorf("crisp fleet interrupted after %s: %w", time.Since(start).Round(time.Millisecond), ctx.Err())
	}
	return fleet, nil
}

// placement is what n's next pod is made of.
func (n *node) placement() Placement {
	return Placement{Node: n.name, Index: n.i, Attempt: n.attempt, Port: n.port, Socket: n.socket}
}

// Runtimes returns each node's runtime as it reports it
// ("containerd://1.6.20"), by node name, once Run has picked the nodes.
func (r *Runner) Runtimes() map[string]string { return r.runtimes }

func orUnknown(runtime string) string {
	if runtime == "" {
		return "runtime not reported"
	}
	return runtime
}

func allDone(nodes []*node) bool {
	for _, n := range nodes {
		if !n.done {
			return false
		}
	}
	return true
}

func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return hex.EncodeToString(b)
}

// failedRun is a node's run that has no report: one failed check saying
// why, so that the node fails in every output.
func (r *Runner) failedRun(node, source, why string) report.Doc {
	if source == "" {
		source = "node " + node
	}
	return report.Doc{Run: report.Run{Node: node, Kind: r.Mode, Source: source,
		Cells: []report.Cell{{Check: r.Mode + "/report", Outcome: report.Fail, Detail: why}}}}
}

// warnLeftovers names pods that earlier runs left behind (a killed crisp
// cannot clean up), so that the user can remove them.
func (r *Runner) warnLeftovers(ctx context.Context) {
	pods, err := r.API.ListPods(ctx, r.Namespace, ManagedByLabel+"="+ManagedBy)
	if err != nil {
		return
	}
	left := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil { // a pod being deleted is on its way out
			left++
		}
	}
	if left > 0 {
		r.track.say(fmt.Sprintf("pods of earlier crisp fleet runs are still in namespace %s: %d (kubectl delete pods -n %s -l %s=%s removes them)",
			r.Namespace, left, r.Namespace, ManagedByLabel, ManagedBy))
	}
}

// smokeTimeout is the --timeout given to smoke on the nodes: shorter than
// the run's, so that a slow node still writes its report (with its error)
// before the run gives up on it.
func (r *Runner) smokeTimeout() string {
	switch {
	case r.Timeout <= 0:
		return "10m"
	case r.Timeout > time.Minute:
		return (r.Timeout - 20*time.Second).String()
	}
	return (r.Timeout * 2 / 3).Round(time.Millisecond).String()
}

// createPods creates the pods, a few at a time; a node whose pod cannot be
// created is done and failed.
func (r *Runner) createPods(ctx context.Context, nodes []*node) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	timeout := r.smokeTimeout()
	for _, n := range nodes {
		// Interrupted or out of time: no more pods, so the clean-up has
		// only those that went out to delete (the rest fail as unfinished).
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			n.started = time.Now()
			err := r.createPod(ctx, r.PodFor(n.placement(), timeout))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				n.done = true
				n.docs = append(n.docs, r.failedRun(n.name, "", fmt.Sprintf("creating pod %s/%s: %v", r.Namespace, n.pod, err)))
				r.track.event(n.name, phaseFailed, fmt.Sprintf("FAIL: creating its pod: %v", err))
				return
			}
			r.track.event(n.name, phasePending, fmt.Sprintf("pod %s/%s created (%s, socket %s, port %d)", r.Namespace, n.pod, orUnknown(n.runtime), n.socket, n.port))
		}()
	}
	wg.Wait()
}

// createPod creates pod, waiting a little for a namespace's default
// service account, which the controller manager creates a moment after the
// namespace (the API server refuses pods until it exists).
func (r *Runner) createPod(ctx context.Context, pod *corev1.Pod) error {
	for try := 0; ; try++ {
		err := r.API.CreatePod(ctx, pod)
		if err == nil || try == 10 || !strings.Contains(err.Error(), "service account") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// cleanup deletes every pod of the run, with a context of its own: it
// runs after Ctrl-C and after the timeout too.
func (r *Runner) cleanup(parent context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), client.CleanupTimeout)
	defer cancel()
	sel := RunLabel + "=" + r.RunID
	if err := r.API.DeletePods(ctx, r.Namespace, sel); err != nil {
		return fmt.Errorf("deleting the run's pods: %w (kubectl delete pods -n %s -l %s removes them)", err, r.Namespace, sel)
	}
	return nil
}
