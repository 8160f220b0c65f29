package kubelet

import (
	"flag"
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
// with kubectl's message for the same fault recorded beside it. The run
// renders docs/doctor.md's table of those messages and verdicts and fails
// when the page says otherwise (CRISP_DOCTOR_TABLE=docs/doctor.md writes it
// instead). The faults that restart the kubelet or its containerd come
// last, grouped: two kubelet starts, two containerd starts.

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
	// walk (the fault is the API server's), which runs on endpoint
	// (default: the containerd node's CRI socket).
	kubeconfig, endpoint string
	kubeArgs, nodeArgs   []string
	kube                 want
	node                 *want
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
	t.Cleanup(func() { tbl.verify(t) })
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
	t.Run("healthy on the CRI-O node", func(t *testing.T) {
		n := requireTwoNodes(t).CRIO
		const crioPod = "crisp-e2e-doctor-crio"
		// nodeName skips the scheduler and with it the node's NoSchedule taint.
		crioID := c.runPod(t, crioPod, fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": %q, "namespace": "default"},
  "spec": {"nodeName": %q, "hostNetwork": true, "dnsPolicy": "Default", "automountServiceAccountToken": false, "terminationGracePeriodSeconds": 0,
    "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}],
    "containers": [{"name": "main", "image": %q, "imagePullPolicy": "IfNotPresent",
      "command": ["sh", "-c", "nc -ll -p %d -e cat & while :; do echo tick; sleep 1; done"]}]}}`, crioPod, n.Name, c.ImageBusybox, port))
		c.runFault(t, tbl, "default/"+crioPod, crioID, fault{name: "none (healthy, the node on CRI-O)", endpoint: n.CRIEndpoint,
			kubeArgs: portArg, nodeArgs: portArg, kube: want{},
			node: &want{hop: "upgrade-websocket-v5", outcome: "note", fix: []string{"a fallback"}}})
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
			kube: want{hop: "upgrade-spdy", sig: "upgrade dropped", fix: []string{"proxy_set_header Upgrade"}}})
	})
	t.Run("kubelet unreachable", func(t *testing.T) {
		rejectTCP(t, net.JoinHostPort(nodeIP, kubeletPort))
		run(t, fault{name: "the API server cannot reach the kubelet", node: &want{},
			kube: want{hop: "kubelet", sig: "kubelet unreachable", cause: []string{nodeIP + ":" + kubeletPort, "InternalIP"}, fix: []string{"nc -vz"}}})
	})
	t.Run("streaming server unreachable", func(t *testing.T) {
		rejectTCP(t, "127.0.0.1:"+streamPort[1])
		run(t, fault{name: "the runtime's streaming server unreachable", node: &want{hop: "tcp", sig: "connection refused", fix: []string{"stream_server_port"}},
			kube: want{hop: "upgrade-websocket-v5", sig: "streaming server unreachable", cause: []string{"127.0.0.1:" + streamPort[1]}, fix: []string{"stream_server_address"}}})
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
			kube: want{hop: "upgrade-spdy", sig: "debugging handlers disabled", fix: []string{"enableDebuggingHandlers: true"}}})
	})
	t.Run("runtime faults", func(t *testing.T) {
		ctrd := c.containerdDaemon(t)
		ctrd.stop(t)
		t.Cleanup(func() { c.restartContainerd(t, ctrd) })
		run(t, fault{name: "the runtime's socket gone (containerd stopped)",
			kube: want{hop: "upgrade-spdy", sig: "runtime socket", fix: []string{"containerRuntimeEndpoint"}},
			node: &want{hop: "runtime", fix: []string{"containerd"}}})
		tlsCfg := c.tlsContainerdConfig(t, ctrd)
		ctrd.start(t, "--config", tlsCfg)
		c.waitRuntime(t)
		c.waitKubelet(t, func() bool { return true })
		run(t, fault{name: "TLS streaming with a certificate nobody trusts",
			kube: want{hop: "upgrade-websocket-v5", sig: "streaming server tls", fix: []string{"enable_tls_streaming"}},
			node: &want{hop: "tls", sig: "tls: unknown authority", fix: []string{"--tls-ca"}}})
		ctrd.stop(t)
	})
	t.Run("healthy again", func(t *testing.T) {
		waitFor(t, 2*time.Minute, "node "+c.NodeName+" Ready", func() bool { return c.nodeReady(t) })
		rep, r := c.doctor(t, "--kubeconfig", c.Kubeconfig, ref)
		if !rep.OK {
			t.Errorf("the cluster is not healthy after the faults: %v", r)
		}
		if rep, r = c.doctor(t, append([]string{id}, portArg...)...); !rep.OK {
			t.Errorf("the node walk is not healthy after the faults: %v", r)
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
	// kubectl and the kubeconfig walk agree on whether exec works.
	if broken := f.kube.outcome == "" && (f.kube.hop != "" || f.kube.sig != ""); broken != (k.Code != 0) {
		t.Errorf("kubectl exec exited %d for %q, but doctor --kubeconfig is to find it %s", k.Code, f.name, map[bool]string{true: "broken", false: "working"}[broken])
	}

	rep, r := c.doctor(t, append([]string{"--kubeconfig", kc, ref}, f.kubeArgs...)...)
	row.kube = check(t, "--kubeconfig", rep, r, f.kube)
	row.node = "not on the node: the API server's side"
	if f.node != nil {
		endpoint := f.endpoint
		if endpoint == "" {
			endpoint = c.CRIEndpoint
		}
		rep, r = c.doctorAt(t, endpoint, append([]string{id}, f.nodeArgs...)...)
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

// The table's markers in docs/doctor.md.
const tableBegin, tableEnd = "<!-- doctor-table:begin -->\n", "<!-- doctor-table:end -->"

// verify renders the run's table and holds docs/doctor.md to it: each
// fault this run met must read there as it read here (ports, IDs and cut
// lengths aside), and a whole run must meet every fault the page lists.
// With CRISP_DOCTOR_TABLE=FILE it writes the table into FILE instead.
func (d *docTable) verify(t *testing.T) {
	if t.Failed() {
		return // a failed walk's verdict documents nothing
	}
	rendered := d.render()
	if path := os.Getenv("CRISP_DOCTOR_TABLE"); path != "" {
		d.write(t, path, rendered)
		return
	}
	const page = "docs/doctor.md"
	b, err := os.ReadFile(filepath.Join(suite.repo, page))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q markers", page, tableBegin, tableEnd)
	}
	documented := tableRows(s[i+len(tableBegin) : j])
	ran := tableRows(rendered)
	for fault, row := range ran {
		if doc, ok := documented[fault]; !ok {
			t.Errorf("%s has no row for the fault %q; this run says:\n%s", page, fault, row)
		} else if normalizeRow(doc) != normalizeRow(row) {
			t.Errorf("%s's row for %q is not what this run says\npage: %s\nrun:  %s", page, fault, doc, row)
		}
	}
	if f := flag.Lookup("test.run"); f == nil || !strings.Contains(f.Value.String(), "/") {
		for fault := range documented {
			if _, ok := ran[fault]; !ok {
				t.Errorf("%s lists the fault %q, which this run did not meet", page, fault)
			}
		}
	}
	if t.Failed() {
		t.Logf("rewrite the table from a run: CRISP_DOCTOR_TABLE=$PWD/%s go test -run TestDoctorNamesTheBrokenHop ./internal/e2e/kubelet", page)
	}
}

// tableRows maps each row of a rendered table to its fault (first cell).
func tableRows(table string) map[string]string {
	rows := map[string]string{}
	for l := range strings.SplitSeq(table, "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| fault |") || strings.HasPrefix(l, "| --- ") {
			continue
		}
		fault, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " | ")
		rows[fault] = l
	}
	return rows
}

// What changes from run to run without changing a row's meaning: the
// ports handed out, container and exec IDs, and so the length of a cut.
var (
	rowPort = regexp.MustCompile(`:\d{2,5}\b`)
	rowID   = regexp.MustCompile(`\b[0-9a-f]{12,64}\b`)
	rowCut  = regexp.MustCompile(`\[\d+ bytes cut\]`)
)

func normalizeRow(s string) string {
	return rowCut.ReplaceAllString(rowID.ReplaceAllString(rowPort.ReplaceAllString(s, ":PORT"), "ID"), "[N bytes cut]")
}

// render is the run's table in the page's form.
func (d *docTable) render() string {
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
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.rows {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", cell(r.fault), strings.ReplaceAll(cell(r.kubectl), "`", "'"), cell(r.kube), cell(r.node))
	}
	return b.String()
}

// write puts the table into path between its markers (the whole file
// when it has none).
func (d *docTable) write(t *testing.T, path, table string) {
	out := table
	if old, err := os.ReadFile(path); err == nil {
		s := string(old)
		if i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd); i >= 0 && j > i {
			out = s[:i+len(tableBegin)] + out + s[j:]
		}
	}
	if err := os.WriteFile(filepath.Clean(path), []byte(out), 0o644); err != nil {
		t.Errorf("writing the table: %v", err)
	}
}
