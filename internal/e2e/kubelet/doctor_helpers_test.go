package kubelet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// What the doctor suite needs around the cluster: its reports, kubeconfigs
// for other users and for a proxy, iptables rules that cut one connection,
// and restarts of the kubelet and its containerd with another config.

// docReport is the part of crisp doctor's JSON report the suite reads.
type docReport struct {
	Mode string   `json:"mode"`
	OK   bool     `json:"ok"`
	Hops []docHop `json:"hops"`
	// NodeSide is the node half of --kubeconfig --node-side.
	NodeSide *docReport `json:"nodeSide"`
	Error    string     `json:"error"`
}

type docHop struct {
	Hop, Outcome, Detail, Tried, Error, Signature, Cause, Fix string
}

// broken is the report's failed hop, else its last noted one.
func (r docReport) broken() (docHop, bool) {
	for _, h := range r.Hops {
		if h.Outcome == "fail" {
			return h, true
		}
	}
	return docHop{}, false
}

func (r docReport) hop(name string) docHop {
	for _, h := range r.Hops {
		if h.Hop == name {
			return h
		}
	}
	return docHop{}
}

func (r docReport) names() string {
	var s []string
	for _, h := range r.Hops {
		s = append(s, h.Hop+"="+h.Outcome)
	}
	return strings.Join(s, " ")
}

// doctor runs crisp doctor -o json with args and reads its report.
func (c *Cluster) doctor(t *testing.T, args ...string) (docReport, result) {
	t.Helper()
	return c.doctorAt(t, c.CRIEndpoint, args...)
}

// doctorAt is doctor on another node's runtime endpoint.
func (c *Cluster) doctorAt(t *testing.T, endpoint string, args ...string) (docReport, result) {
	t.Helper()
	r := runCmd(t, nil, c.CrispBin, append([]string{"--runtime-endpoint", endpoint, "-o", "json", "doctor", "--hop-timeout", "20s"}, args...)...)
	var rep docReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("crisp doctor %s: no report (%v): %v", strings.Join(args, " "), err, r)
	}
	return rep, r
}

// kubectlAs runs kubectl with another kubeconfig.
func (c *Cluster) kubectlAs(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	return runCmd(t, nil, c.Kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// firstLine is kubectl's message as a user reads it: its first line
// that is not a klog line.
func firstLine(s string) string {
	for l := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "E1") && !strings.HasPrefix(l, "W1") && !strings.HasPrefix(l, "I1") {
			return l
		}
	}
	return ""
}

// kubeconfigAs writes a copy of the admin's kubeconfig that impersonates
// user (groups system:authenticated), or points at a proxy (server and
// its CA, the admin's token passed through) when server is set.
func (c *Cluster) kubeconfigAs(t *testing.T, user string, server *proxied) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if user != "" {
		ai := cfg.AuthInfos[ctx.AuthInfo]
		ai.Impersonate = user
		ai.ImpersonateGroups = []string{"system:authenticated"}
	}
	if server != nil {
		cl := cfg.Clusters[ctx.Cluster]
		cl.Server = server.url
		cl.CertificateAuthority, cl.CertificateAuthorityData = "", server.ca
	}
	ctx.Namespace = "default"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// proxied is a proxy's URL and the PEM of the CA its certificate verifies
// with.
type proxied struct {
	url string
	ca  []byte
}

// apiProxy is a reverse proxy on loopback in front of the API server
// (HTTPS: client-go sends no token over plain http), passing the client's
// credentials through; refuseWS answers WebSocket upgrades 400 (a proxy
// that speaks no WebSocket), dropUpgrade strips the Upgrade headers (a
// proxy that passes no upgrades).
func (c *Cluster) apiProxy(t *testing.T, refuseWS, dropUpgrade bool) *proxied {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	ca := cfg.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	pool.AppendCertsFromPEM(ca)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
			if dropUpgrade {
				pr.Out.Header.Del("Upgrade")
				pr.Out.Header.Del("Connection")
			}
		},
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: false},
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuseWS && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "this proxy does not pass WebSocket", http.StatusBadRequest)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &proxied{url: srv.URL, ca: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
}

// rejectTCP makes connections from this host to addr (host:port) fail
// with a reset, as a closed port does, until t ends.
func rejectTCP(t *testing.T, addr string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	rule := []string{"OUTPUT", "-p", "tcp", "-d", host, "--dport", port, "-j", "REJECT", "--reject-with", "tcp-reset"}
	if out, err := exec.Command("iptables", append([]string{"-w", "-I"}, rule...)...).CombinedOutput(); err != nil {
		t.Fatalf("iptables -I %s: %v\n%s", strings.Join(rule, " "), err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("iptables", append([]string{"-w", "-D"}, rule...)...).CombinedOutput(); err != nil {
			t.Errorf("iptables -D %s: %v\n%s", strings.Join(rule, " "), err, out)
		}
	})
}

// daemon is a process of the cluster's (the kubelet, its containerd) the
// suite stops and starts again by the PID in its pid file, with its own
// command line and environment, or with one argument's value changed.
type daemon struct {
	name, pidFile, logFile string
	args, env              []string
}

func readDaemon(t *testing.T, name, pidFile, logFile string) *daemon {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		t.Fatalf("%s (pid %s) is not running: %v", name, pid, err)
	}
	environ, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	split := func(b []byte) []string { return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") }
	return &daemon{name: name, pidFile: pidFile, logFile: logFile, args: split(cmdline), env: split(environ)}
}

// stop ends the daemon (TERM, KILL after 15 s) and waits until it is gone.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(d.pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(stat), ") Z ") {
			break // a zombie the lead's shell will reap
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond) // waiting for the daemon to exit
	}
}

// start runs the daemon again in its own session (it outlives the test,
// as the cluster's scripts start it) with flag's value replaced by value
// when flag is set, and records its PID.
func (d *daemon) start(t *testing.T, flag, value string) {
	t.Helper()
	args := append([]string(nil), d.args...)
	if flag != "" {
		replaced := false
		for i := range args {
			if args[i] == flag && i+1 < len(args) {
				args[i+1], replaced = value, true
			} else if v, ok := strings.CutPrefix(args[i], flag+"="); ok && v != "" {
				args[i], replaced = flag+"="+value, true
			}
		}
		if !replaced {
			args = append(args, flag, value)
		}
	}
	logf, err := os.OpenFile(d.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logf.Close() }() // the child has its own copy
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = d.env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s again: %v", d.name, err)
	}
	if err := os.WriteFile(d.pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Release() // the cluster's scripts stop it by its pid file
}

// selfSigned writes a certificate for 127.0.0.1 signed by itself (a CA
// nobody trusts) and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "crisp-e2e-untrusted-streaming"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// waitFor polls cond every half second until it holds or bound passes.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(500 * time.Millisecond) // polling the cluster
	}
}
