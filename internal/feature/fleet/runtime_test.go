package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestParseSockets(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"", "{ map[]}", ""},
		{"/run/x.sock", "{/run/x.sock map[]}", ""},
		{"containerd=/a.sock, cri-o=/b.sock", "{ map[containerd:/a.sock cri-o:/b.sock]}", ""},
		{"run/x.sock", "", "absolute, clean path"},
		{"/run/../etc/x.sock", "", "absolute, clean path"},
		{"containerd=/a.sock,/b.sock", "", "want PATH, or RUNTIME=PATH pairs"},
		{"=/a.sock", "", "want PATH, or RUNTIME=PATH pairs"},
	} {
		s, err := ParseSockets(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if got := fmtSockets(s); err != nil || got != tc.want {
			t.Errorf("%q: %s (err %v), want %s", tc.in, got, err, tc.want)
		}
	}
}

func fmtSockets(s Sockets) string {
	var b strings.Builder
	b.WriteString("{" + s.All + " map[")
	first := true
	for _, k := range []string{"containerd", "cri-o"} {
		if v, ok := s.ByRuntime[k]; ok {
			if !first {
				b.WriteString(" ")
			}
			b.WriteString(k + ":" + v)
			first = false
		}
	}
	b.WriteString("]}")
	return b.String()
}

func runtimeNode(name, runtime string, annotations map[string]string) corev1.Node {
	n := readyNode(name, true)
	n.Status.NodeInfo.ContainerRuntimeVersion = runtime
	n.Annotations = annotations
	return n
}

func TestSocketFor(t *testing.T) {
	kubeadm := map[string]string{KubeadmSocketAnnotation: "unix:///var/run/containerd/containerd.sock"}
	for _, tc := range []struct {
		flag    string
		node    corev1.Node
		want    string
		wantErr string
	}{
		{"", runtimeNode("a", "containerd://1.6.20", nil), "/run/containerd/containerd.sock", ""},
		{"", runtimeNode("b", "cri-o://1.34.0", nil), "/run/crio/crio.sock", ""},
		{"", runtimeNode("c", "containerd://2.4.2", kubeadm), "/var/run/containerd/containerd.sock", ""},
		{"", runtimeNode("d", "rkt://1.0", nil), "", "the node runs rkt://1.0 and crisp knows no socket for it: pass --runtime-socket rkt=PATH"},
		{"", runtimeNode("e", "", nil), "", "the node runs a runtime it does not name and crisp knows no socket for it: pass --runtime-socket RUNTIME=PATH"},
		{"/x.sock", runtimeNode("f", "rkt://1.0", nil), "/x.sock", ""},
		{"containerd=/c.sock,cri-o=/o.sock", runtimeNode("g", "cri-o://1.34.0", kubeadm), "/o.sock", ""},
		{"containerd=/c.sock", runtimeNode("h", "cri-o://1.34.0", nil), "", "the node runs cri-o://1.34.0 and --runtime-socket names sockets for containerd only: pass --runtime-socket cri-o=PATH"},
	} {
		s, err := ParseSockets(tc.flag)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.socketFor(tc.node)
		if got != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("%s with %q: %q, %v; want %q, %q", tc.node.Name, tc.flag, got, err, tc.want, tc.wantErr)
		}
	}
}

// Two runtimes in one run: each node's pod mounts its own runtime's socket,
// each node's report says which runtime it ran on, and a node whose runtime
// crisp cannot place fails at once saying what to pass.
func TestMixedRuntimes(t *testing.T) {
	api := newFake()
	api.nodes = []corev1.Node{runtimeNode("ctrd", "containerd://1.6.20", nil), runtimeNode("crio", "cri-o://1.34.0", nil), runtimeNode("odd", "rkt://1.0", nil)}
	for _, n := range []string{"ctrd", "crio"} {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	r, progress := runner(api, time.Minute)
	r.RuntimeSocket = ""
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sockets := map[string]string{}
	for _, p := range api.created {
		sockets[p.Spec.NodeName] = p.Spec.Volumes[0].HostPath.Path
	}
	if sockets["ctrd"] != "/run/containerd/containerd.sock" || sockets["crio"] != "/run/crio/crio.sock" || len(sockets) != 2 {
		t.Errorf("sockets by node: %v", sockets)
	}
	if src := findRun(t, fl, "crio").Source; !strings.Contains(src, ", cri-o://1.34.0)") {
		t.Errorf("the CRI-O node's source %q does not name its runtime", src)
	}
	if d := findRun(t, fl, "odd").Cells[0].Detail; !strings.Contains(d, "pass --runtime-socket rkt=PATH") {
		t.Errorf("odd: %q", d)
	}
	if !strings.Contains(progress.String(), "crio: pod kube-system/crisp-smoke-abc123-1 created (cri-o://1.34.0, socket /run/crio/crio.sock, port 7777)") {
		t.Errorf("progress:\n%s", progress)
	}
	if got := r.Runtimes(); got["odd"] != "rkt://1.0" || got["ctrd"] != "containerd://1.6.20" {
		t.Errorf("runtimes %v", got)
	}
	var text strings.Builder
	if err := WriteTable(&text, fl, r.Runtimes()); err != nil {
		t.Fatal(err)
	}
	want := "  1 FAIL smoke/report: the node runs rkt://1.0 and crisp knows no socket for it: pass --runtime-socket rkt=PATH\n" +
		"         on rkt://1.0 (1)\n         odd\n  2 ok   1 passed\n         on containerd://1.6.20 (1), cri-o://1.34.0 (1)\n         crio, ctrd\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("table:\n%s\nwant:\n%s", text.String(), want)
	}
}

// A node that stops answering during the run (its runtime stopped, the
// kubelet says NotReady) fails at the timeout saying so.
func TestNodeGoneNotReadyDuringTheRun(t *testing.T) {
	api := newFake("node-a")
	api.script["node-a"] = func(poll int, st *corev1.PodStatus) {
		finishes(0)(min(poll, 1), st) // crisp runs, and nothing is heard of it again
		if poll == 3 {
			api.nodes[0].Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "container runtime is down"}
		}
	}
	r, _ := runner(api, 300*time.Millisecond)
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "the node is not Ready (KubeletNotReady: container runtime is down) now"
	if d := findRun(t, fl, "node-a").Cells[0].Detail; !strings.Contains(d, "did not finish within --timeout 300ms") || !strings.Contains(d, want) {
		t.Errorf("detail %q, want %q", d, want)
	}
}

// A log read that fails for a moment (the API server restarting, a node's
// address missing at a thousand nodes) is tried again; one that keeps
// failing fails the node saying so.
func TestLogReadTriedAgain(t *testing.T) {
	api := newFake("blip", "gone")
	for _, n := range []string{"blip", "gone"} {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	api.logErrs["blip"], api.logErrs["gone"] = 2, 100
	r, _ := runner(api, time.Minute)
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if findRun(t, fl, "blip").Failed() {
		t.Errorf("a log read that failed twice and then worked failed the node: %+v", findRun(t, fl, "blip"))
	}
	if d := findRun(t, fl, "gone").Cells[0].Detail; !strings.Contains(d, "its log could not be read (3 tries, a poll apart): no preferred addresses found") {
		t.Errorf("gone: %q", d)
	}
}
