package doctor

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/transport"
)

// What an error on the workstation path means. The API server flattens
// most of the path's failures into a status message ("error dialing
// backend: dial tcp ADDR: ..."), and the same words mean different hops:
// the API server failing to reach the kubelet, or the kubelet failing to
// reach the runtime's streaming server. The address they name tells them
// apart: the kubelet's endpoint (the node hop read it) or another.

// The workstation path's signatures, beside signature.go's.
const (
	sigUnauthorized      = "HTTP 401"
	sigForbidden         = "HTTP 403"
	sigDebugDisabled     = "debugging handlers disabled"
	sigKubeletUnreach    = "kubelet unreachable"
	sigKubeletTLS        = "kubelet tls"
	sigStreamUnreachable = "streaming server unreachable"
	sigStreamTLS         = "streaming server tls"
	sigRuntimeSocket     = "runtime socket"
	sigUpgradeDropped    = "upgrade dropped"
)

// statusCode is the HTTP status an API error carries (0 when none): a
// status from the API, one inside a failed WebSocket upgrade, or one the
// SPDY upgrade recorded.
func statusCode(err error) int {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return int(st.Status().Code)
	}
	var uf *httpstream.UpgradeFailureError
	if errors.As(err, &uf) && uf.Cause != nil {
		if c := statusCode(uf.Cause); c != 0 {
			return c
		}
	}
	var us *upgradeStatusError
	if errors.As(err, &us) {
		return us.code
	}
	if m := handshakeStatus.FindStringSubmatch(err.Error()); m != nil {
		c, _ := strconv.Atoi(m[1])
		return c
	}
	return 0
}

// handshakeStatus is the status gorilla's bad handshake error quotes.
var handshakeStatus = regexp.MustCompile(`bad handshake \((\d{3}) `)

// upgradeStatusError is a refused SPDY upgrade with the status the server
// answered (client-go's SPDY upgrader keeps only the message).
type upgradeStatusError struct {
	code int
	err  error
}

func (e *upgradeStatusError) Error() string { return e.err.Error() }
func (e *upgradeStatusError) Unwrap() error { return e.err }

// dialedAddr is the address a "dial tcp ADDR:" error names.
var dialedAddr = regexp.MustCompile(`dial tcp ([^ ]+?):? `)

// kubeSignature is the class of an error on the workstation path.
func (w *kubeWalker) kubeSignature(err error) string {
	m := strings.ToLower(err.Error())
	code := statusCode(err)
	switch {
	case strings.Contains(m, "debug endpoints are disabled"):
		return sigDebugDisabled
	case strings.Contains(m, "error dialing backend"), strings.Contains(m, "error trying to reach service"), strings.Contains(m, "error sending request"):
		tlsErr := strings.Contains(m, "x509") || strings.Contains(m, "tls:")
		if w.isKubelet(w.dialedIn(err.Error())) {
			if tlsErr {
				return sigKubeletTLS
			}
			return sigKubeletUnreach
		}
		if tlsErr {
			return sigStreamTLS
		}
		return sigStreamUnreachable
	case strings.Contains(m, "rpc error") && (strings.Contains(m, "unavailable") || strings.Contains(m, "no such file or directory") || strings.Contains(m, "error while dialing")):
		return sigRuntimeSocket
	case strings.Contains(m, "missing upgrade headers"), strings.Contains(m, "upgrade request required"), strings.TrimSpace(strings.TrimPrefix(m, "unable to upgrade connection:")) == "":
		return sigUpgradeDropped
	case code == 401:
		return sigUnauthorized
	case code == 403, strings.Contains(m, " is forbidden: "):
		return sigForbidden
	case code == 404 && strings.Contains(m, "page not found"):
		return sigDebugDisabled
	case code != 0 && code != 500:
		return "HTTP " + strconv.Itoa(code)
	}
	if e, ok := transport.StartFailure(err.Error()); ok {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return signature(err)
}

// sentTo is the URL an "error sending request: Post URL" names: the
// kubelet's words for a runtime's streaming URL it could not reach.
var sentTo = regexp.MustCompile(`error sending request: [A-Z]+ "?https?://([^/"\s]+)/`)

// dialedIn is the host:port a dial error names ("" when none).
func (w *kubeWalker) dialedIn(msg string) string {
	if m := dialedAddr.FindStringSubmatch(msg); m != nil {
		return strings.TrimSuffix(m[1], ":")
	}
	if m := sentTo.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// isKubelet reports whether addr is the kubelet's endpoint: one of the
// node's addresses at its kubelet port. An address the dial error does
// not name is the kubelet's when the kubelet hop could not run.
func (w *kubeWalker) isKubelet(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if w.kubeletPort == 0 {
		return port == "10250" && !isLoopback(host) // the kubelet's default port; runtimes stream on loopback
	}
	if port != strconv.Itoa(int(w.kubeletPort)) {
		return false
	}
	return len(w.addresses) == 0 || slices.ContainsFunc(w.addresses, func(a corev1.NodeAddress) bool { return a.Address == host })
}

// addressType names the node address type of a dialed host:port (" (the
// node's InternalIP)"), or "" when it is none of the node's.
func (w *kubeWalker) addressType(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	for _, a := range w.addresses {
		if a.Address == host {
			return fmt.Sprintf(" (the node's %s)", a.Type)
		}
	}
	return ""
}

// kubeFail fills h as failed with err: its class, and what it means on
// this hop of the workstation path.
func (w *kubeWalker) kubeFail(h *Hop, tried string, err error) {
	h.Outcome = Fail
	h.Tried = redactTokens(tried)
	h.Error = redactTokens(err.Error())
	h.Signature = w.kubeSignature(err)
	h.Cause, h.Fix = w.explainKube(h.Name, h.Signature, err.Error())
}

// explainKube words the cause and the fix of a workstation failure.
func (w *kubeWalker) explainKube(hop, sig, msg string) (string, string) {
	if hop == HopAPIServer {
		return explainAPIServer(sig, w.server)
	}
	node := w.nodeName
	if node == "" {
		node = "the pod's node"
	}
	dialed := w.dialedIn(msg)
	switch sig {
	case sigUnauthorized:
		return "the API server did not accept the kubeconfig's credentials (401 Unauthorized): a token or certificate that expired, was revoked, or belongs to another cluster",
			"renew the credentials (kubectl config view --minify shows which the context uses; re-run your cloud's get-credentials or oidc login)"
	case sigForbidden:
		return fmt.Sprintf("the API server's authorizer denied %q the request (403 Forbidden): RBAC grants it no such permission in namespace %s", w.user, w.ns),
			rbacFixLines(w.ns, w.user, w.groups, []permission{permGetPod, permExec, permAttach, permPortForward})
	case sigDebugDisabled:
		return fmt.Sprintf("the kubelet of %s refuses exec, attach and port-forward: enableDebuggingHandlers is false in its KubeletConfiguration (it answers \"Debug endpoints are disabled.\", 405; older kubelets 404)", node),
			"set enableDebuggingHandlers: true in the kubelet's configuration file (--config; the --enable-debugging-handlers flag on old kubelets) and restart the kubelet (systemctl restart kubelet)"
	case sigKubeletUnreach:
		return fmt.Sprintf("the API server cannot reach the kubelet of %s at %s%s: %s", node, or(dialed, "its endpoint"), w.addressType(dialed), w.dialedDescription()),
			fmt.Sprintf("from the API server's host, check %s is reachable (nc -vz %s): the kubelet runs and listens there (on the node: systemctl status kubelet, ss -ltnp | grep kubelet), no firewall drops the API server's connections to the kubelet port, and --kubelet-preferred-address-types on the API server names an address type it can route to (kubeadm: %s)",
				or(dialed, "the kubelet's address and port"), strings.Replace(or(dialed, "ADDRESS PORT"), ":", " ", 1), kubeadmAddressTypes)
	case sigKubeletTLS:
		return fmt.Sprintf("the API server does not trust the serving certificate of the kubelet of %s at %s, or the certificate does not name that address", node, or(dialed, "its endpoint")),
			"give the kubelet a certificate signed by the CA the API server's --kubelet-certificate-authority names (serverTLSBootstrap: true in the KubeletConfiguration, then kubectl certificate approve its CSR), naming the address the API server dials"
	case sigStreamUnreachable:
		return fmt.Sprintf("the kubelet of %s reached the runtime (CRI Exec answered with a streaming URL) but cannot connect to the runtime's streaming server at %s: it is down, or listens on an address the kubelet does not reach", node, or(dialed, "the URL's address")),
			forEach(w.flavour, func(k keys) string {
				return fmt.Sprintf("on the node, set %s and %s in %s to an address the kubelet reaches (127.0.0.1), then %s; crisp doctor CONTAINER on the node walks the runtime's half", k.addr, k.port, k.where, k.restart)
			})
	case sigStreamTLS:
		return fmt.Sprintf("the kubelet of %s does not trust the TLS certificate of the runtime's streaming server (the kubelet verifies it against the node's system roots)", node),
			forEach(w.flavour, func(k keys) string {
				return fmt.Sprintf("give the runtime a certificate the node trusts (%s) or set %s = false in %s (the stream then stays on loopback in plaintext), then %s", k.certs, k.tls, k.where, k.restart)
			})
	case sigRuntimeSocket:
		return fmt.Sprintf("the kubelet of %s cannot call its runtime over the CRI socket: the runtime is down or its socket is gone", node),
			"on the node: systemctl status containerd (or crio) and restart it; the kubelet's containerRuntimeEndpoint names the socket; crisp doctor on the node checks it"
	case sigUpgradeDropped:
		return "the request reached the kubelet without its Upgrade and Connection headers: a proxy or load balancer between you and the API server drops them (kubectl says \"unable to upgrade connection\")",
			"let the proxy pass upgrades (nginx: proxy_http_version 1.1 with proxy_set_header Upgrade $http_upgrade and Connection \"upgrade\"; a load balancer in TCP mode), or point the kubeconfig's server: at the API server directly"
	case sigNotRunning:
		return explainTarget(sigNotRunning, msg)
	}
	if strings.HasPrefix(sig, "exit ") {
		code, _ := strconv.Atoi(strings.TrimPrefix(sig, "exit "))
		return explainExit(code, strings.Join(w.cmd, " "), msg)
	}
	return fmt.Sprintf("the API server answered with an error (%s)", sig),
		fmt.Sprintf("kubectl -v=8 shows the request and its answer; on %s: journalctl -u kubelet, and crisp doctor CONTAINER walks the node's half", node)
}

// explainAPIServer words a failure to reach the API server at all.
func explainAPIServer(sig, server string) (string, string) {
	switch {
	case sig == sigUnauthorized:
		return "the API server did not accept the kubeconfig's credentials (401 Unauthorized)",
			"renew the credentials (kubectl config view --minify shows which the context uses)"
	case strings.HasPrefix(sig, "tls"):
		return fmt.Sprintf("the API server at %s presented a certificate the kubeconfig's certificate-authority does not verify, or one for another name", server),
			"use the kubeconfig your cluster's tooling wrote (its certificate-authority-data), or --context for the right cluster"
	case sig == sigRefused, sig == sigTimeout, sig == sigNoSocket, sig == sigReset:
		return fmt.Sprintf("nothing answers at %s (%s): the API server is down, the address is wrong, or a VPN, proxy or firewall stands between", server, sig),
			"check the kubeconfig's server: (kubectl config view --minify), and that the API server runs (kubectl cluster-info from a machine that reaches it)"
	}
	return fmt.Sprintf("the API server at %s answered with an error (%s)", server, sig), "kubectl -v=8 version shows the request and its answer"
}

// explainRBAC says which permissions are missing and the lines that grant
// them.
func explainRBAC(ns, user string, groups []string, missing []permission) (string, string) {
	var names []string
	for _, p := range missing {
		names = append(names, p.String())
	}
	return fmt.Sprintf("RBAC does not let %q %s in namespace %s (kubectl exec, attach and port-forward need get on pods and create on pods/exec, pods/attach, pods/portforward); kubectl then fails with \"Forbidden\"", user, strings.Join(names, ", "), ns),
		rbacFixLines(ns, user, groups, missing)
}

// rbacFixLines are the kubectl commands that grant missing to the user.
func rbacFixLines(ns, user string, _ []string, missing []permission) string {
	byVerb := map[string][]string{}
	var verbs []string
	for _, p := range missing {
		if _, ok := byVerb[p.verb]; !ok {
			verbs = append(verbs, p.verb)
		}
		r := p.resource
		if p.sub != "" {
			r += "/" + p.sub
		}
		byVerb[p.verb] = append(byVerb[p.verb], r)
	}
	subject := "--user=" + user
	if sa, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		subject = "--serviceaccount=" + sa
	}
	if user == "" {
		subject = "--user=USER"
	}
	var lines []string
	for _, v := range verbs {
		role := "crisp-doctor-" + v
		lines = append(lines, fmt.Sprintf("kubectl create role %s -n %s --verb=%s --resource=%s", role, ns, v, strings.Join(byVerb[v], ",")),
			fmt.Sprintf("kubectl create rolebinding %s -n %s --role=%s %s", role, ns, role, subject))
	}
	return "a cluster admin runs: " + strings.Join(lines, "; ")
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
