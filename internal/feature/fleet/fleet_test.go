package fleet

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeAPI plays the API server and the kubelets: each node's pod goes
// through the states its script gives, one per ListPods.
type fakeAPI struct {
	mu       sync.Mutex
	nodes    []corev1.Node
	pods     map[string]*corev1.Pod
	polls    map[string]int                                  // by pod
	taken    map[string]int                                  // by node: a port another process holds
	script   map[string]func(poll int, st *corev1.PodStatus) // by node
	logs     map[string]string                               // by node
	events   map[string][]corev1.Event                       // by node
	deleted  []string
	created  []*corev1.Pod
	listErrs int
	noSA     int // CreatePod calls refused before the default service account exists
	calls    map[string]int
	logErrs  map[string]int // by node: PodLog calls that fail before one succeeds
}

func newFake(nodes ...string) *fakeAPI {
	f := &fakeAPI{pods: map[string]*corev1.Pod{}, polls: map[string]int{}, taken: map[string]int{}, calls: map[string]int{}, logErrs: map[string]int{}, script: map[string]func(int, *corev1.PodStatus){},
		logs: map[string]string{}, events: map[string][]corev1.Event{}}
	for _, n := range nodes {
		f.nodes = append(f.nodes, readyNode(n, true))
	}
	return f
}

func readyNode(name string, ready bool) corev1.Node {
	st := corev1.ConditionTrue
	if !ready {
		st = corev1.ConditionFalse
	}
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "a"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st, Reason: "KubeletNotReady", Message: "PLEG is not healthy"}}}}
}

func (f *fakeAPI) ListNodes(_ context.Context, sel string) ([]corev1.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["ListNodes"]++
	if sel == "pool=none" {
		return nil, nil
	}
	return f.nodes, nil
}

func (f *fakeAPI) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetNode"]++
	for i := range f.nodes {
		if f.nodes[i].Name == name {
			return &f.nodes[i], nil
		}
	}
	return nil, fmt.Errorf("nodes %q %w", name, ErrNotFound)
}

func (f *fakeAPI) CreatePod(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["CreatePod"]++
	if pod.Spec.NodeName == "refuses" {
		return fmt.Errorf("pods is forbidden: violates PodSecurity")
	}
	if f.noSA > 0 {
		f.noSA--
		return fmt.Errorf(`pods %q is forbidden: error looking up service account ns/default: serviceaccount "default" not found`, pod.Name)
	}
	p := pod.DeepCopy()
	p.Status.Phase = corev1.PodPending
	f.pods[p.Name] = p
	f.created = append(f.created, pod)
	return nil
}

func (f *fakeAPI) ListPods(_ context.Context, ns, sel string) ([]corev1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["ListPods"]++
	if f.listErrs > 0 && !strings.Contains(sel, ManagedByLabel) {
		f.listErrs--
		return nil, fmt.Errorf("connection refused")
	}
	var out []corev1.Pod
	for _, p := range f.pods {
		k, v, _ := strings.Cut(sel, "=")
		if p.Namespace != ns || p.Labels[k] != v {
			continue
		}
		node := p.Spec.NodeName
		switch s := f.script[node]; {
		case strings.Contains(sel, ManagedByLabel):
		case f.taken[node] != 0 && strings.Contains(p.Spec.InitContainers[0].Command[2], fmt.Sprintf(" -p %d ", f.taken[node])):
			portTaken(f.polls[p.Name], &p.Status, p.Spec.InitContainers[0].Name, f.taken[node])
			f.polls[p.Name]++
		case s != nil:
			s(f.polls[p.Name], &p.Status)
			f.polls[p.Name]++
		}
		out = append(out, *p)
	}
	return out, nil
}

func (f *fakeAPI) DeletePod(_ context.Context, ns, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["DeletePod"]++
	f.deleted = append(f.deleted, ns+" "+name)
	delete(f.pods, name)
	return nil
}

func (f *fakeAPI) DeletePods(_ context.Context, ns, sel string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["DeletePods"]++
	f.deleted = append(f.deleted, ns+" "+sel)
	for name, p := range f.pods {
		if k, v, _ := strings.Cut(sel, "="); p.Labels[k] == v {
			delete(f.pods, name)
		}
	}
	return nil
}

func (f *fakeAPI) PodLog(_ context.Context, _, pod, container string, limit int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["PodLog"]++
	p := f.pods[pod]
	if p == nil || container != CrispContainer {
		return nil, fmt.Errorf("no pod %s container %s", pod, container)
	}
	if f.logErrs[p.Spec.NodeName] > 0 {
		f.logErrs[p.Spec.NodeName]--
		return nil, fmt.Errorf("no preferred addresses found; known addresses: []")
	}
	b := []byte(f.logs[p.Spec.NodeName])
	if int64(len(b)) > limit {
		b = b[:limit]
	}
	return b, nil
}

func (f *fakeAPI) PodEvents(_ context.Context, _, pod string) ([]corev1.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["PodEvents"]++
	if p := f.pods[pod]; p != nil {
		return f.events[p.Spec.NodeName], nil
	}
	return nil, nil
}

// finishes: the crisp container runs, then exits with code.
func finishes(code int32) func(int, *corev1.PodStatus) {
	return func(poll int, st *corev1.PodStatus) {
		switch poll {
		case 0:
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: CrispContainer, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
		case 1:
			st.Phase = corev1.PodRunning
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: CrispContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		default:
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: CrispContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: map[bool]string{true: "Completed", false: "Error"}[code == 0]}}}}
		}
	}
}

// portTaken: the target's nc cannot listen, as the kubelet shows it: the
// sidecar ends with exitPortLost and its log's last lines, and restarts.
func portTaken(poll int, st *corev1.PodStatus, target string, port int) {
	msg := fmt.Sprintf("nc: bind: Address already in use\n%s\n%s %d ended (nc exit status 1); ...\n", target, targetLastWords, port)
	ended := &corev1.ContainerStateTerminated{ExitCode: exitPortLost, Reason: "Error", Message: msg}
	ts := corev1.ContainerStatus{Name: target, State: corev1.ContainerState{Terminated: ended}}
	if poll > 0 {
		ts = corev1.ContainerStatus{Name: target, RestartCount: int32(poll), LastTerminationState: corev1.ContainerState{Terminated: ended},
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	}
	st.InitContainerStatuses = []corev1.ContainerStatus{ts}
	st.ContainerStatuses = []corev1.ContainerStatus{{Name: CrispContainer, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
}

// stuck: the socket's hostPath is no socket, the pod never starts.
func stuck(_ int, st *corev1.PodStatus) {
	st.InitContainerStatuses = []corev1.ContainerStatus{{Name: "crisp-target-x", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	st.ContainerStatuses = []corev1.ContainerStatus{{Name: CrispContainer, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
}

func smokeJSON(node, outcome string) string {
	return fmt.Sprintf("crisp: smoke: waiting\n{\n  \"schemaVersion\": 1,\n  \"kind\": \"smoke\",\n  \"node\": %q,\n  \"checks\": [\n    {\"call\": \"exec\", \"name\": \"echo\", \"outcome\": %q}\n  ]\n}\n", node, outcome)
}

func runner(api API, timeout time.Duration) (*Runner, *bytes.Buffer) {
	var progress bytes.Buffer
	return &Runner{API: api, Progress: &progress, Config: Config{Mode: ModeSmoke, Namespace: "kube-system", Image: "crisp:dev", TargetImage: "busybox:1.36",
		RuntimeSocket: "/run/containerd/containerd.sock", Port: 7777, Timeout: timeout, RunID: "abc123", Poll: time.Millisecond}}, &progress
}

func TestTwoNodesPass(t *testing.T) {
	api := newFake("node-a", "node-b")
	for _, n := range []string{"node-a", "node-b"} {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	api.listErrs = 1 // a blip of the API server is no failure
	api.noSA = 1     // nor a namespace a moment old
	r, progress := runner(api, time.Minute)
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := fl.Check(); err != nil || len(fl.Runs) != 2 {
		t.Fatalf("fleet: %v, %d runs; progress:\n%s", err, len(fl.Runs), progress)
	}
	for _, want := range []string{"node-a: pod kube-system/crisp-smoke-abc123-0 created", "node-a: running smoke", "node-b: ok after", "listing pods: connection refused"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	if len(api.deleted) != 1 || api.deleted[0] != "kube-system crisp-fleet-run=abc123" || len(api.pods) != 0 {
		t.Errorf("deleted %v, pods left %d", api.deleted, len(api.pods))
	}
}

// The acceptance case: a wrong runtime socket leaves the pod waiting; the
// run ends at its timeout with the node failed and the reason.
func TestStuckNodeFailsAtTimeoutWithReason(t *testing.T) {
	api := newFake("node-a", "node-b")
	api.script["node-a"] = finishes(0)
	api.logs["node-a"] = smokeJSON("node-a", "pass")
	api.script["node-b"] = stuck
	api.events["node-b"] = []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "FailedMount", Message: "MountVolume.SetUp failed for volume \"runtime-socket\" : hostPath type check failed: /run/nope.sock is not a socket file"}}
	r, progress := runner(api, 200*time.Millisecond)
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fl.OK() {
		t.Fatal("a node that never ran passed")
	}
	var b *report.Run
	for i := range fl.Runs {
		if fl.Runs[i].Node == "node-b" {
			b = &fl.Runs[i]
		}
	}
	if b == nil || !b.Failed() {
		t.Fatalf("node-b not failed: %+v", fl.Runs)
	}
	detail := b.Cells[0].Detail
	for _, want := range []string{"did not finish within --timeout 200ms", "crisp waiting: PodInitializing", "ContainerCreating", "FailedMount", "is not a socket file"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the reason lacks %q: %s", want, detail)
		}
	}
	if !strings.Contains(progress.String(), "node-b: FAIL: did not finish") || len(api.pods) != 0 {
		t.Errorf("pods left %d; progress:\n%s", len(api.pods), progress)
	}
}

func TestNodesWithoutReportFail(t *testing.T) {
	api := newFake("quiet", "crashed", "lies")
	api.nodes = append(api.nodes, readyNode("down", false))
	api.script["quiet"] = finishes(0)
	api.logs["quiet"] = "crisp: smoke: connected\n"
	api.script["crashed"] = finishes(137)
	api.logs["crashed"] = smokeJSON("crashed", "pass")[:60]
	api.script["lies"] = finishes(2)
	api.logs["lies"] = smokeJSON("lies", "pass")
	r, _ := runner(api, time.Minute)
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, run := range fl.Runs {
		for _, c := range run.Cells {
			if c.Outcome == report.Fail {
				failed[run.Node] += c.Detail
			}
		}
	}
	for node, want := range map[string]string{"quiet": "printed no report", "lies": "exited 2 (Error) though its report passed", "down": "not Ready (KubeletNotReady",
		"crashed": "crisp exited 137 (Error) and its report could not be read: "} {
		if !strings.Contains(failed[node], want) {
			t.Errorf("%s: %q lacks %q", node, failed[node], want)
		}
	}
	if len(fl.Problems) != 1 || !strings.Contains(fl.Problems[0].Err, "cut short") {
		t.Errorf("the crashed node's cut report: problems %v", fl.Problems)
	}
	if len(api.created) != 3 {
		t.Errorf("%d pods created; the node that is not Ready gets none", len(api.created))
	}
}

func TestNamedNodes(t *testing.T) {
	api := newFake("node-a", "refuses")
	api.script["node-a"] = finishes(0)
	api.logs["node-a"] = smokeJSON("node-a", "pass")
	r, _ := runner(api, time.Minute)
	r.Nodes = []string{"node-a", "ghost", "refuses", "node-a"}
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fl.OK() || len(fl.Runs) != 3 {
		t.Fatalf("runs %+v", fl.Runs)
	}
	text := new(bytes.Buffer)
	if err := WriteTable(text, fl, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  1 FAIL smoke/report: no such node in the cluster\n         ghost\n",
		"  1 FAIL smoke/report: creating pod kube-system/crisp-smoke-abc123-1: pods is forbidden: violates PodSecurity\n         refuses\n",
		"  1 ok   1 passed\n         node-a\n", "CHECK         ghost (+1)  node-a\nsmoke/report  FAIL        -\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestNoMatchingNode(t *testing.T) {
	api := newFake("node-a")
	api.pods["old"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "kube-system", Labels: map[string]string{ManagedByLabel: ManagedBy}}}
	gone := metav1.Now()
	api.pods["going"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "going", Namespace: "kube-system", DeletionTimestamp: &gone, Labels: map[string]string{ManagedByLabel: ManagedBy}}}
	r, progress := runner(api, time.Minute)
	r.Nodes = []string{"ghost"}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "pods of earlier crisp fleet runs are still in namespace kube-system: 1 ") {
		t.Errorf("leftovers not named (or the one being deleted counted):\n%s", progress)
	}
	r, _ = runner(api, time.Minute)
	r.Selector = "pool=none"
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), `no node matches the selector "pool=none"`) {
		t.Errorf("err = %v", err)
	}
	if len(api.created) != 0 {
		t.Error("pods created without nodes")
	}
}

// Ctrl-C: the run stops, says so, and still deletes its pods.
func TestInterruptedCleansUp(t *testing.T) {
	api := newFake("node-a")
	api.script["node-a"] = stuck
	r, _ := runner(api, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	api.script["node-a"] = func(poll int, st *corev1.PodStatus) {
		stuck(poll, st)
		if poll == 2 {
			cancel()
		}
	}
	fl, err := r.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || fl == nil || fl.OK() {
		t.Fatalf("err %v fleet %+v", err, fl)
	}
	if len(api.deleted) != 1 || len(api.pods) != 0 {
		t.Errorf("deleted %v, %d pods left", api.deleted, len(api.pods))
	}
	if d := fl.Runs[0].Cells[0].Detail; !strings.HasPrefix(d, "interrupted: pod kube-system/crisp-smoke-abc123-0") {
		t.Errorf("detail %q", d)
	}
}

func TestPodSpec(t *testing.T) {
	r, _ := runner(nil, 5*time.Minute)
	r.ExtraArgs = []string{"--strict"}
	p := r.PodFor(Placement{Node: "node-a", Index: 3, Port: 7777, Socket: "/run/containerd/containerd.sock"}, r.smokeTimeout())
	s := p.Spec
	if p.Name != "crisp-smoke-abc123-3" || p.Labels[ManagedByLabel] != ManagedBy || p.Labels[RunLabel] != "abc123" || p.Annotations[NodeAnnotation] != "node-a" {
		t.Errorf("meta %+v", p.ObjectMeta)
	}
	if s.NodeName != "node-a" || !s.HostNetwork || *s.AutomountServiceAccountToken || s.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || s.DNSPolicy != corev1.DNSDefault {
		t.Errorf("spec %+v", s)
	}
	for _, tol := range s.Tolerations {
		if tol.Effect == corev1.TaintEffectNoExecute || tol.Effect == "" {
			t.Errorf("tolerates NoExecute: %+v", tol)
		}
	}
	if len(s.InitContainers) != 1 || *s.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways || s.InitContainers[0].Image != "busybox:1.36" {
		t.Errorf("target %+v", s.InitContainers)
	}
	c := s.Containers[0]
	for _, ctr := range append(s.InitContainers, c) {
		sc := ctr.SecurityContext
		if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s security %+v", ctr.Name, sc)
		}
	}
	want := "smoke crisp-target-abc123 --pod crisp-smoke-abc123-3 --port 7777 -o json --node-name node-a --timeout 4m40s --strict"
	if got := strings.Join(c.Args, " "); c.Image != "crisp:dev" || got != want {
		t.Errorf("crisp: image %s args %q, want %q", c.Image, got, want)
	}
	if hp := s.Volumes[0].HostPath; hp.Path != "/run/containerd/containerd.sock" || *hp.Type != corev1.HostPathSocket {
		t.Errorf("socket %+v", hp)
	}
	if !strings.Contains(strings.Join(s.InitContainers[0].Command, " "), "nc -ll -p 7777 -e cat") {
		t.Errorf("target command %v", s.InitContainers[0].Command)
	}
}

// cancelAfter is the fake API with Ctrl-C pressed once n pods exist.
type cancelAfter struct {
	*fakeAPI
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	err := c.fakeAPI.CreatePod(ctx, pod)
	c.mu.Lock()
	made := len(c.created)
	c.mu.Unlock()
	if made == c.n {
		c.cancel()
	}
	return err
}

// Ctrl-C while the pods are being created: no more are asked for (those
// in flight at most), the ones made are deleted, and a node whose pod
// never went out says so rather than that it never showed up.
func TestInterruptedStopsCreatingPods(t *testing.T) {
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("node-%03d", i))
	}
	fake := newFake(names...)
	for _, n := range names {
		fake.script[n] = stuck
	}
	ctx, cancel := context.WithCancel(context.Background())
	api := &cancelAfter{fakeAPI: fake, n: 20, cancel: cancel}
	r, _ := runner(api, time.Minute)
	fl, err := r.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || fl == nil {
		t.Fatalf("err %v", err)
	}
	fake.mu.Lock()
	asked, left := fake.calls["CreatePod"], len(fake.pods)
	fake.mu.Unlock()
	if asked > 20+8 { // at most the creates already in flight
		t.Errorf("%d pods asked for after Ctrl-C at 20", asked)
	}
	if left != 0 {
		t.Errorf("%d pods left", left)
	}
	if len(fl.Runs) != 200 {
		t.Fatalf("%d nodes in the fleet, want 200", len(fl.Runs))
	}
	notCreated := 0
	for _, run := range fl.Runs {
		d := run.Cells[0].Detail
		if !strings.HasPrefix(d, "interrupted: pod kube-system/crisp-smoke-abc123-") {
			t.Errorf("node %s: %q", run.Node, d)
		}
		if strings.Contains(d, "was not created (the run ended first)") {
			notCreated++
		}
	}
	if notCreated < 200-28 {
		t.Errorf("%d nodes say their pod was not created, want at least %d", notCreated, 200-28)
	}
}

// setReady sets a fake node's Ready condition; the caller holds f.mu (a
// pod's script runs under it).
func (f *fakeAPI) setReady(name string, ready bool) {
	for i := range f.nodes {
		if f.nodes[i].Name == name {
			f.nodes[i] = readyNode(name, ready)
			f.nodes[i].Status.Conditions[0].Message = "container runtime is down"
		}
	}
}

// A node whose runtime stops during the run fails once it has stayed not
// Ready for the grace, with the reason, long before --timeout; the other
// node finishes. A node not Ready at one check only (a kubelet's restart)
// does not fail. Both ways: by selector (one list) and --nodes (a read
// per node).
func TestNodeNotReadyDuringTheRunFailsEarly(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(fmt.Sprintf("nodes=%v", named), func(t *testing.T) {
			api := newFake("node-a", "node-b", "node-c")
			api.script["node-a"] = finishes(0)
			api.logs["node-a"] = smokeJSON("node-a", "pass")
			api.script["node-b"] = func(poll int, st *corev1.PodStatus) {
				stuck(poll, st)
				if poll == 2 {
					api.setReady("node-b", false) // for good
				}
			}
			api.script["node-c"] = func(poll int, st *corev1.PodStatus) {
				switch poll {
				case 2:
					api.setReady("node-c", false)
				case 3:
					api.setReady("node-c", true)
				}
				// Running through the blip, done at the 7th list.
				step := min(poll, 1)
				if poll >= 6 {
					step = 2
				}
				finishes(0)(step, st)
			}
			api.logs["node-c"] = smokeJSON("node-c", "pass")
			r, progress := runner(api, 20*time.Second)
			if named {
				r.Nodes = []string{"node-a", "node-b", "node-c"}
			}
			r.nodeCheck, r.notReadyGrace = time.Millisecond, 50*time.Millisecond
			start := time.Now()
			fl, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the run took %s: the not Ready node was waited for", took)
			}
			if len(fl.Runs) != 3 {
				t.Fatalf("%d runs; progress:\n%s", len(fl.Runs), progress)
			}
			for _, run := range fl.Runs {
				d := run.Cells[0].Detail
				switch run.Node {
				case "node-a", "node-c":
					if run.Failed() {
						t.Errorf("%s failed: %q", run.Node, d)
					}
				case "node-b":
					for _, want := range []string{"the node is not Ready (KubeletNotReady: container runtime is down)", "during the run: pod kube-system/crisp-smoke-abc123-1 Pending"} {
						if !strings.Contains(d, want) {
							t.Errorf("node-b's failure %q lacks %q", d, want)
						}
					}
					if strings.Contains(d, "--timeout") {
						t.Errorf("node-b waited for --timeout: %q", d)
					}
				}
			}
			if len(api.pods) != 0 {
				t.Errorf("%d pods left", len(api.pods))
			}
		})
	}
}
