package kubelet

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// crisp doctor on the real cluster: each hop of the path broken in turn,
// doctor run from the workstation (--kubeconfig) and on the node (the
// kubelet's CRI socket), checked to name the hop, the cause and the fix,
// with kubectl's message for the same fault recorded beside it. With
// CRISP_DOCTOR_TABLE=docs/doctor.md the run writes that table between the
// file's markers. The faults that restart the kubelet or its containerd
// come last, grouped: two kubelet starts, two containerd starts.

// want is what one mode of doctor must say for a fault: the hop that
// fails (or notes, when outcome is "note"; "" for a healthy walk), words
// of its signature, cause and fix.
type want struct {
	hop, outcome, sig string
	cause, fix        []string
}

// fault is one broken hop, its kubectl and doctor runs.
type fault struct {
	name string
	// kubeconfig is the workstation's (default: the admin's); kubeArgs
	// and nodeArgs are doctor's extra arguments; node nil skips the node
	// walk (the fault is the API server's).
	kubeconfig         string
	kubeArgs, nodeArgs []string
	kube               want
	node               *want
	// kubectl runs kubectl for the same fault (exec of --command).
	kubectl []string
}

// docRow is one fault's line in docs/doctor.md's table.
type docRow struct{ fault, kubectl, kube, node string }

type docTable struct {
	mu   sync.Mutex
	rows []docRow
}

func (d *docTable) add(r docRow) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rows = append(d.rows, r)
}

func TestDoctorNamesTheBrokenHop(t *testing.T) {
	c := requireCluster(t)
	tbl := &docTable{}
	t.Cleanup(func() { tbl.write(t) })
	port := freeHostPort(t)
	const pod = "crisp-e2e-doctor"
	id := c.runPod(t, pod, fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": %q, "namespace": "default"},
  "spec": {"hostNetwork": true, "dnsPolicy": "Default", "automountServiceAccountToken": false, "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "main", "image": %q, "imagePullPolicy": "IfNotPresent",
      "command": ["sh", "-c", "nc -ll -p %d -e cat & while :; do echo tick; sleep 1; done"]}]}}`, pod, c.ImageBusybox, port))
	ref := "default/" + pod
	portArg := []string{"--port", fmt.Sprint(port)}
	run := func(t *testing.T, f fault) { c.runFault(t, tbl, ref, id, f) }

	// The stream port the kubelet's containerd hands out, for the fault
	// that cuts it.
	healthy, r := c.doctor(t, append([]string{id}, portArg...)...)
	if !healthy.OK {
		t.Fatalf("the node walk is not healthy before any fault: %v", r)
	}
	streamPort := regexp.MustCompile(`port (\d+),`).FindStringSubmatch(healthy.hop("exec-rpc").Detail)
	if streamPort == nil {
		t.Fatalf("no stream port in %q", healthy.hop("exec-rpc").Detail)
	}
	nodeIP := c.mustKubectl(t, nil, "get", "node", c.NodeName, "-o", `jsonpath={.status.addresses[?(@.type=="InternalIP")].address}`).Stdout
	kubeletPort := c.mustKubectl(t, nil, "get", "node", c.NodeName, "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}").Stdout

	t.Run("healthy", func(t *testing.T) {
		run(t, fault{name: "none (healthy)", kubeArgs: portArg, nodeArgs: portArg, kube: want{}, node: &want{hop: "upgrade-websocket-v5", outcome: "note", fix: []string{"a fallback"}}})
	})
	t.Run("healthy, both halves", func(t *testing.T) {
		rep, r := c.doctor(t, append([]string{"--kubeconfig", c.Kubeconfig, ref, "--node-side"}, portArg...)...)
		n := rep.NodeSide
		if !rep.OK || n == nil || !n.OK || n.Mode != "node" {
			t.Fatalf("--node-side on a healthy node: %v", r)
		}
		for _, hop := range []string{"target", "tcp", "exec", "attach", "port-forward"} {
			if n.hop(hop).Outcome != "pass" {
				t.Errorf("the node half's hop %s did not pass: %s", hop, n.names())
			}
		}
	})
	t.Run("no pods/exec", func(t *testing.T) {
		const user = "crisp-e2e-noexec"
		c.grant(t, "crisp-e2e-doctor-get", user, "get", "pods")
		c.grant(t, "crisp-e2e-doctor-stream", user, "create", "pods/attach,pods/portforward")
		run(t, fault{name: "a user without create on pods/exec", kubeconfig: c.kubeconfigAs(t, user, nil),
			kube: want{hop: "rbac", sig: "HTTP 403", cause: []string{user, "create pods/exec"},
				fix: []string{"kubectl create role crisp-doctor-create -n default --verb=create --resource=pods/exec", "--user=" + user}}})
	})
	t.Run("container stopped", func(t *testing.T) {
		const done = "crisp-e2e-doctor-exited"
		c.mustKubectl(t, strings.NewReader(fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": %q, "namespace": "default"},
  "spec": {"restartPolicy": "Never", "hostNetwork": true, "automountServiceAccountToken": false, "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "main", "image": %q, "imagePullPolicy": "IfNotPresent", "command": ["sh", "-c", "exit 3"]}]}}`, done, c.ImageBusybox)), "apply", "-f", "-")
		t.Cleanup(func() { c.kubectl(t, nil, "delete", "pod", done, "--wait", "--timeout=1m") })
		c.mustKubectl(t, nil, "wait", "--for=jsonpath={.status.phase}=Failed", "pod/"+done, "--timeout=2m")
		_, stopped, _ := strings.Cut(c.mustKubectl(t, nil, "get", "pod", done, "-o", "jsonpath={.status.containerStatuses[0].containerID}").Stdout, "://")
		c.runFault(t, tbl, "default/"+done, stopped, fault{name: "the container stopped (exit 3)",
			kube: want{hop: "pod", sig: "not running", cause: []string{"exit code 3"}, fix: []string{"kubectl describe pod"}},
			node: &want{hop: "target", sig: "not running", fix: []string{"crisp start"}}})
	})
	t.Run("binary missing", func(t *testing.T) {
		run(t, fault{name: "the binary missing", kubeArgs: []string{"--command", "/no/such/binary"}, nodeArgs: []string{"--command", "/no/such/binary"},
			kube: want{hop: "exec", sig: "exit 127", cause: []string{"could not find"}}, node: &want{hop: "exec", sig: "exit 127", cause: []string{"could not find"}},
			kubectl: []string{"/no/such/binary"}})
	})
	t.Run("binary not executable", func(t *testing.T) {
		run(t, fault{name: "the binary not executable", kubeArgs: []string{"--command", "/etc/passwd"}, nodeArgs: []string{"--command", "/etc/passwd"},
			kube: want{hop: "exec", sig: "exit 126", cause: []string{"cannot be executed"}}, node: &want{hop: "exec", sig: "exit 126", cause: []string{"cannot be executed"}},
			kubectl: []string{"/etc/passwd"}})
	})
	t.Run("websocket refused", func(t *testing.T) {
		kc := c.kubeconfigAs(t, "", c.apiProxy(t, true, false))
		run(t, fault{name: "WebSocket refused (a proxy without WebSocket; containerd serves no v5)", kubeconfig: kc,
			kube: want{hop: "upgrade-websocket-v5", outcome: "note", fix: []string{"a fallback"}},
			node: &want{hop: "upgrade-websocket-v5", outcome: "note", fix: []string{"a fallback"}}})
	})
	t.Run("upgrade headers dropped", func(t *testing.T) {
		kc := c.kubeconfigAs(t, "", c.apiProxy(t, false, true))
		run(t, fault{name: "a proxy dropping the Upgrade headers", kubeconfig: kc,
			kube: want{sig: "upgrade dropped", fix: []string{"proxy_set_header Upgrade"}}})
	})
	t.Run("kubelet unreachable", func(t *testing.T) {
		rejectTCP(t, net.JoinHostPort(nodeIP, kubeletPort))
		run(t, fault{name: "the API server cannot reach the kubelet", node: &want{},
			kube: want{hop: "kubelet", sig: "kubelet unreachable", cause: []string{nodeIP + ":" + kubeletPort, "InternalIP"}, fix: []string{"nc -vz"}}})
	})
	t.Run("streaming server unreachable", func(t *testing.T) {
		rejectTCP(t, "127.0.0.1:"+streamPort[1])
		run(t, fault{name: "the runtime's streaming server unreachable", node: &want{hop: "tcp", sig: "connection refused", fix: []string{"stream_server_port"}},
			kube: want{sig: "streaming server unreachable", cause: []string{"127.0.0.1:" + streamPort[1]}, fix: []string{"stream_server_address"}}})
		// One verdict from the workstation: the kubelet's error through the
		// API server, and the node half, walked there, names the hop.
		rep, r := c.doctor(t, "--kubeconfig", c.Kubeconfig, ref, "--node-side")
		n := rep.NodeSide
		if rep.OK || n == nil || n.OK {
			t.Fatalf("--node-side with the streaming server cut: %v", r)
		}
		if h, _ := n.broken(); h.Hop != "tcp" || !strings.Contains(h.Error, "connection refused") {
			t.Errorf("the node half broke at %+v, want tcp: connection refused (%s)", h, n.names())
		}
		if !strings.Contains(r.Stderr, "node side on "+c.NodeName+": broken at hop tcp") {
			t.Errorf("the verdict does not name the node half's hop: %v", r)
		}
	})
	t.Run("debugging handlers off", func(t *testing.T) {
		c.withKubeletDebuggingHandlersOff(t)
		run(t, fault{name: "the kubelet with enableDebuggingHandlers: false", node: &want{},
			kube: want{sig: "debugging handlers disabled", fix: []string{"enableDebuggingHandlers: true"}}})
	})
	t.Run("runtime faults", func(t *testing.T) {
		ctrd := c.containerdDaemon(t)
		ctrd.stop(t)
		t.Cleanup(func() { c.restartContainerd(t, ctrd) })
		run(t, fault{name: "the runtime's socket gone (containerd stopped)",
			kube: want{sig: "runtime socket", fix: []string{"containerRuntimeEndpoint"}},
			node: &want{hop: "runtime", fix: []string{"containerd"}}})
		tlsCfg := c.tlsContainerdConfig(t, ctrd)
		ctrd.start(t, "--config", tlsCfg)
		c.waitRuntime(t)
		c.waitKubelet(t, func() bool { return true })
		run(t, fault{name: "TLS streaming with a certificate nobody trusts",
			kube: want{sig: "streaming server tls", fix: []string{"enable_tls_streaming"}},
			node: &want{hop: "tls", sig: "tls: unknown authority", fix: []string{"--tls-ca"}}})
		ctrd.stop(t)
	})
	t.Run("healthy again", func(t *testing.T) {
		waitFor(t, 2*time.Minute, "node "+c.NodeName+" Ready", func() bool { return c.nodeReady(t) })
		rep, r := c.doctor(t, "--kubeconfig", c.Kubeconfig, ref)
		if !rep.OK {
			t.Errorf("the cluster is not healthy after the faults: %v", r)
		}
	})
}

// runFault runs kubectl and both doctor walks for one fault and checks them.
func (c *Cluster) runFault(t *testing.T, tbl *docTable, ref, id string, f fault) {
	t.Helper()
	kc := f.kubeconfig
	if kc == "" {
		kc = c.Kubeconfig
	}
	cmd := f.kubectl
	if cmd == nil {
		cmd = []string{"true"}
	}
	ns, pod, _ := strings.Cut(ref, "/")
	k := c.kubectlAs(t, kc, append([]string{"exec", "-n", ns, pod, "--"}, cmd...)...)
	row := docRow{fault: f.name, kubectl: firstLine(k.Stderr)}
	if k.Code == 0 {
		row.kubectl = "(exit 0)"
	} else if row.kubectl == "" || strings.Contains(k.Stderr, "command terminated") {
		row.kubectl = fmt.Sprintf("%s (exit %d)", row.kubectl, k.Code)
	}
	t.Logf("kubectl exec: %s", row.kubectl)

	rep, r := c.doctor(t, append([]string{"--kubeconfig", kc, ref}, f.kubeArgs...)...)
	row.kube = check(t, "--kubeconfig", rep, r, f.kube)
	row.node = "not on the node: the API server's side"
	if f.node != nil {
		rep, r = c.doctor(t, append([]string{id}, f.nodeArgs...)...)
		row.node = check(t, "on the node", rep, r, *f.node)
	}
	tbl.add(row)
}

// check compares one walk with w and words the table's cell.
func check(t *testing.T, mode string, rep docReport, r result, w want) string {
	t.Helper()
	h, failed := rep.broken()
	if w.outcome == "note" {
		h = rep.hop(w.hop)
		if failed || h.Outcome != "note" {
			t.Errorf("doctor %s: want a note at %s and no failure; hops %s\n%v", mode, w.hop, rep.names(), r)
		}
	}
	switch {
	case w.sig == "" && w.hop == "" && w.outcome == "":
		if failed || r.Code != 0 {
			t.Errorf("doctor %s: want every hop to pass; hops %s\n%v", mode, rep.names(), r)
		}
		return "every hop passes"
	case w.outcome == "":
		if !failed || r.Code != 1 {
			t.Fatalf("doctor %s: want a failed hop; hops %s\n%v", mode, rep.names(), r)
		}
		if w.hop != "" && h.Hop != w.hop {
			t.Errorf("doctor %s: failed at %s, want %s (%s)", mode, h.Hop, w.hop, h.Error)
		}
	}
	if !strings.Contains(h.Signature, w.sig) {
		t.Errorf("doctor %s at %s: signature %q, want %q (error %q)", mode, h.Hop, h.Signature, w.sig, h.Error)
	}
	for _, s := range w.cause {
		if !strings.Contains(h.Cause+" "+h.Error, s) {
			t.Errorf("doctor %s at %s: the cause %q does not say %q", mode, h.Hop, h.Cause, s)
		}
	}
	for _, s := range w.fix {
		if !strings.Contains(h.Fix, s) {
			t.Errorf("doctor %s at %s: the fix %q does not say %q", mode, h.Hop, h.Fix, s)
		}
	}
	t.Logf("doctor %s: %s %s (%s): %s | fix: %s", mode, strings.ToUpper(h.Outcome), h.Hop, h.Signature, h.Cause, h.Fix)
	return fmt.Sprintf("%s at `%s` (%s): %s", strings.ToUpper(h.Outcome), h.Hop, h.Signature, h.Cause)
}

// grant creates a role with verb on resources in default, bound to user,
// for the test's time.
func (c *Cluster) grant(t *testing.T, role, user, verb, resources string) {
	t.Helper()
	c.mustKubectl(t, nil, "-n", "default", "create", "role", role, "--verb="+verb, "--resource="+resources)
	c.mustKubectl(t, nil, "-n", "default", "create", "rolebinding", role, "--role="+role, "--user="+user)
	t.Cleanup(func() {
		c.kubectl(t, nil, "-n", "default", "delete", "rolebinding", role)
		c.kubectl(t, nil, "-n", "default", "delete", "role", role)
	})
}

// freeHostPort is a port nothing on the host listens on (a moment ago).
func freeHostPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // freed for the pod
	return l.Addr().(*net.TCPAddr).Port
}

// write puts the table into CRISP_DOCTOR_TABLE's file between its
// markers (the whole file when it has none).
func (d *docTable) write(t *testing.T) {
	path := os.Getenv("CRISP_DOCTOR_TABLE")
	if path == "" || t.Failed() {
		return
	}
	var b strings.Builder
	b.WriteString("| fault | kubectl exec says | crisp doctor --kubeconfig | crisp doctor on the node |\n| --- | --- | --- | --- |\n")
	// The streaming URLs' single-use tokens and the runtime's IDs say
	// nothing a reader needs.
	token := regexp.MustCompile(`(/(?:exec|attach|portforward)/)[A-Za-z0-9_-]+`)
	id := regexp.MustCompile(`\b([0-9a-f]{12})[0-9a-f]{52}\b`)
	cell := func(s string) string {
		s = id.ReplaceAllString(token.ReplaceAllString(s, "${1}REDACTED"), "${1}…")
		return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
	}
	for _, r := range d.rows {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", cell(r.fault), strings.ReplaceAll(cell(r.kubectl), "`", "'"), cell(r.kube), cell(r.node))
	}
	const begin, end = "<!-- doctor-table:begin -->\n", "<!-- doctor-table:end -->"
	out := b.String()
	if old, err := os.ReadFile(path); err == nil {
		s := string(old)
		if i, j := strings.Index(s, begin), strings.Index(s, end); i >= 0 && j > i {
			out = s[:i+len(begin)] + out + s[j:]
		}
	}
	if err := os.WriteFile(filepath.Clean(path), []byte(out), 0o644); err != nil {
		t.Errorf("writing the table: %v", err)
	}
}
