package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The faults that need the kubelet or its containerd started again with
// another configuration, and what puts the cluster back.

// clusterDir is scripts/k8s/up.sh's folder (the admin's kubeconfig is
// there).
func (c *Cluster) clusterDir() string { return filepath.Dir(c.Kubeconfig) }

func (c *Cluster) nodeReady(t *testing.T) bool {
	t.Helper()
	r := c.kubectl(t, nil, "get", "node", c.NodeName, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	return r.Code == 0 && r.Stdout == "True"
}

// execWorks says whether kubectl exec through the kubelet runs true.
func (c *Cluster) execWorks(t *testing.T, pod string) bool {
	t.Helper()
	return c.kubectl(t, nil, "exec", pod, "--", "true").Code == 0
}

// withKubeletDebuggingHandlersOff starts the kubelet again with
// enableDebuggingHandlers: false in a copy of its configuration, and puts
// it back with its own at the end of t.
func (c *Cluster) withKubeletDebuggingHandlersOff(t *testing.T) {
	t.Helper()
	dir := c.clusterDir()
	k := readDaemon(t, "kubelet", filepath.Join(dir, "pids", "kubelet.pid"), filepath.Join(dir, "logs", "kubelet.log"))
	orig := flagValue(k.args, "--config")
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "enableDebuggingHandlers") {
		t.Fatalf("%s already sets enableDebuggingHandlers", orig)
	}
	off := filepath.Join(dir, "kubelet-doctor-nodebug.yaml")
	if err := os.WriteFile(off, append(data, []byte("\nenableDebuggingHandlers: false\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	k.stop(t)
	t.Cleanup(func() {
		k.stop(t)
		k.start(t, "", "")
		_ = os.Remove(off)
		c.waitKubelet(t, func() bool { return c.execWorks(t, "crisp-e2e-doctor") })
	})
	k.start(t, "--config", off)
	c.waitKubelet(t, func() bool {
		r := c.kubectl(t, nil, "exec", "crisp-e2e-doctor", "--", "true")
		return r.Code != 0 && strings.Contains(r.Stderr, "Debug endpoints are disabled")
	})
}

// waitKubelet waits until the kubelet answers through the API server, the
// node is Ready and ready holds.
func (c *Cluster) waitKubelet(t *testing.T, ready func() bool) {
	t.Helper()
	waitFor(t, 2*time.Minute, "the kubelet back", func() bool {
		r := c.kubectl(t, nil, "get", "--raw", "/api/v1/nodes/"+c.NodeName+"/proxy/healthz")
		return r.Code == 0 && strings.TrimSpace(r.Stdout) == "ok" && c.nodeReady(t) && ready()
	})
}

// containerdDaemon is the kubelet's containerd (scripts/containerd-up.sh's
// pid and log files beside its socket).
func (c *Cluster) containerdDaemon(t *testing.T) *daemon {
	t.Helper()
	dir := filepath.Dir(c.HostSocketPath)
	return readDaemon(t, "containerd", filepath.Join(dir, "containerd.pid"), filepath.Join(dir, "containerd.log"))
}

// restartContainerd stops whatever containerd runs now and starts d with
// its own command line; the node is Ready and exec works again after.
func (c *Cluster) restartContainerd(t *testing.T, d *daemon) {
	t.Helper()
	if pidAlive(d.pidFile) {
		d.stop(t)
	}
	d.start(t, "", "")
	c.waitRuntime(t)
	c.waitKubelet(t, func() bool { return c.execWorks(t, "crisp-e2e-doctor") })
}

func pidAlive(pidFile string) bool {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	var pid int
	for _, ch := range strings.TrimSpace(string(data)) {
		pid = pid*10 + int(ch-'0')
	}
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// waitRuntime waits until the kubelet's containerd answers CRI Version.
func (c *Cluster) waitRuntime(t *testing.T) {
	t.Helper()
	waitFor(t, time.Minute, "containerd answering", func() bool {
		return runCmd(t, nil, c.CrispBin, "--runtime-endpoint", c.CRIEndpoint, "version").Code == 0
	})
}

// tlsContainerdConfig is a copy of d's configuration with TLS streaming
// on, its certificate signed by itself (nobody trusts it).
func (c *Cluster) tlsContainerdConfig(t *testing.T, d *daemon) string {
	t.Helper()
	orig := flagValue(d.args, "--config")
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.Contains(s, "enable_tls_streaming = false") {
		t.Fatalf("%s has no enable_tls_streaming = false to turn on", orig)
	}
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	s = strings.Replace(s, "enable_tls_streaming = false", "enable_tls_streaming = true", 1) +
		"\n[plugins.\"io.containerd.grpc.v1.cri\".x509_key_pair_streaming]\n  tls_cert_file = \"" + cert + "\"\n  tls_key_file = \"" + key + "\"\n"
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// flagValue is the value of flag in a command line (--flag V or --flag=V).
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}
