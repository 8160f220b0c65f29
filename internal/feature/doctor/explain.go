package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

// What an error means depends on the runtime: the same refused port is
// stream_server_port on containerd and stream_port on CRI-O. This file
// tells the runtimes apart (CRI Version's name and version) and words the
// cause and the fix for each; docs/doctor.md carries the same keys.

// Flavour is the runtime as doctor tells them apart.
type Flavour string

// The flavours. containerd 2.x moved most CRI settings to
// io.containerd.cri.v1.runtime and .images (config version 3) but kept the
// streaming server's in io.containerd.grpc.v1.cri.
const (
	Containerd1 Flavour = "containerd-1.x"
	Containerd2 Flavour = "containerd-2.x"
	CRIO        Flavour = "cri-o"
	Mock        Flavour = "crisp-mock"
	Unknown     Flavour = "unknown"
)

// FlavourOf tells the runtime from CRI Version's RuntimeName and
// RuntimeVersion ("containerd" "v2.4.2", "cri-o" "1.34.0").
func FlavourOf(name, version string) Flavour {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "containerd":
		v := strings.TrimPrefix(strings.TrimSpace(version), "v")
		major, _, _ := strings.Cut(v, ".")
		if n, err := strconv.Atoi(major); err == nil && n >= 2 {
			return Containerd2
		}
		if major == "" {
			return Unknown
		}
		return Containerd1
	case "cri-o", "crio":
		return CRIO
	case "crisp-mock":
		return Mock
	}
	return Unknown
}

// keys are a flavour's streaming configuration, as its users write it.
type keys struct {
	title string
	// where is the streaming section and file; addr, port, tls the keys.
	where, addr, port, tls string
	// certs says how the serving certificate is named.
	certs string
	// socket is where the CRI socket is configured.
	socket string
	// restart is how the change takes effect.
	restart string
}

var flavourKeys = map[Flavour]keys{
	Containerd1: {
		title: "containerd 1.x",
		where: `[plugins."io.containerd.grpc.v1.cri"] in /etc/containerd/config.toml (config version 2)`,
		addr:  "stream_server_address", port: "stream_server_port", tls: "enable_tls_streaming",
		certs:   `[plugins."io.containerd.grpc.v1.cri".x509_key_pair_streaming] tls_cert_file and tls_key_file`,
		socket:  `[grpc] address in /etc/containerd/config.toml`,
		restart: "restart containerd (systemctl restart containerd)",
	},
	Containerd2: {
		title: "containerd 2.x",
		where: `[plugins.'io.containerd.grpc.v1.cri'] in /etc/containerd/config.toml (config version 3: the streaming keys stayed in this plugin, not in io.containerd.cri.v1.runtime)`,
		addr:  "stream_server_address", port: "stream_server_port", tls: "enable_tls_streaming",
		certs:   `[plugins.'io.containerd.grpc.v1.cri'.x509_key_pair_streaming] tls_cert_file and tls_key_file`,
		socket:  `[grpc] address in /etc/containerd/config.toml`,
		restart: "restart containerd (systemctl restart containerd)",
	},
	CRIO: {
		title: "CRI-O",
		where: "[crio.api] in /etc/crio/crio.conf or a drop-in in /etc/crio/crio.conf.d",
		addr:  "stream_address", port: "stream_port", tls: "stream_enable_tls",
		certs:   "[crio.api] stream_tls_cert and stream_tls_key (stream_tls_ca for client certificates)",
		socket:  "[crio.api] listen",
		restart: "restart crio (systemctl restart crio)",
	},
	Mock: {
		title: "crisp's mock runtime",
		where: "crisp mock-runtime's flags",
		addr:  "--stream-addr", port: "--stream-addr", tls: "--tls-dir",
		certs:   "--tls-dir DIR (the CA, server and client certificates are generated there)",
		socket:  "--listen",
		restart: "restart crisp mock-runtime",
	},
}

// keysOf returns f's keys; ok is false for a runtime doctor does not know.
func keysOf(f Flavour) (keys, bool) {
	k, ok := flavourKeys[f]
	return k, ok
}

// forEach words a fix for f, or for every runtime doctor knows when f is
// unknown (the fix names each one's keys).
func forEach(f Flavour, word func(k keys) string) string {
	if k, ok := keysOf(f); ok {
		return word(k)
	}
	var parts []string
	for _, fl := range []Flavour{Containerd1, Containerd2, CRIO} {
		k := flavourKeys[fl]
		parts = append(parts, k.title+": "+word(k))
	}
	return strings.Join(parts, "; ")
}

// on is " (containerd 2.x)", naming the runtime in the explanations'
// first sentence.
func on(f Flavour) string {
	if k, ok := keysOf(f); ok {
		return " (" + k.title + ")"
	}
	return ""
}

// The explanations, one per class of failure: cause, then fix.

func explainSocket(sig, endpoint string) (string, string) {
	runtimes := "containerd: " + flavourKeys[Containerd1].socket + "; CRI-O: " + flavourKeys[CRIO].socket +
		"; the kubelet's is containerRuntimeEndpoint (KubeletConfiguration) or --container-runtime-endpoint"
	switch sig {
	case sigNoSocket:
		return fmt.Sprintf("nothing at %s: the runtime is not running, or its socket is elsewhere", endpoint),
			"start the runtime (systemctl start containerd or crio), or point crisp at its socket with -r/--runtime-endpoint; where it listens: " + runtimes
	case sigRefused:
		return fmt.Sprintf("the socket %s exists but nobody accepts on it: a runtime that died and left its socket behind", endpoint),
			"restart the runtime (systemctl restart containerd or crio); if another runtime is meant, point crisp at it with -r (" + runtimes + ")"
	case sigPermission:
		return fmt.Sprintf("crisp may not open %s", endpoint), "run crisp as root (sudo), or as a member of the socket's group"
	case sigTimeout:
		return "the runtime accepted the connection but did not answer in time: it is overloaded or stuck",
			"look at the runtime's log (journalctl -u containerd or -u crio); raise --request-timeout to wait longer"
	}
	return "the runtime's gRPC service failed the call", "look at the runtime's log (journalctl -u containerd or -u crio); -D shows every gRPC call"
}

func explainNotReady(f Flavour, cond, reason, message string) (string, string) {
	cause := fmt.Sprintf("the runtime%s says %s is false: %s %s", on(f), cond, reason, message)
	if cond == "NetworkReady" {
		return cause, "the runtime's CNI configuration is missing or broken: look at its log and at the CNI conf_dir (containerd: [plugins.\"io.containerd.grpc.v1.cri\".cni] conf_dir; CRI-O: [crio.network] network_dir)"
	}
	return cause, "look at the runtime's log (journalctl -u containerd or -u crio) for why it is not ready"
}

func explainTarget(sig, what string) (string, string) {
	switch sig {
	case sigNotRunning:
		return what + ": exec and attach need a running container, and the runtime refuses a stream into a stopped one",
			"start it (crisp start ID) or find why it stopped (crisp logs ID, crisp inspect ID; on a kubelet's node kubectl describe pod): a container the kubelet manages is restarted by the kubelet"
	case sigPodNotReady:
		return what + ": port-forward needs the pod's network namespace, which a stopped pod no longer has",
			"recreate the pod (on a kubelet's node: kubectl delete pod, and its controller makes a new one)"
	}
	return what, "list what runs with crisp ps -a and crisp pods, and name a container or pod by ID, unique prefix or name"
}

func explainRPC(f Flavour, call string) (string, string) {
	return fmt.Sprintf("the runtime%s refused the %s call before any streaming: the container or pod is not in a state to stream", on(f), call),
		"check the target with crisp inspect ID; the runtime's log says more (journalctl -u containerd or -u crio)"
}

// sporadicCutFix is the fix for a connection to the streaming server cut
// by something on the way, at the TCP hop or at an upgrade.
const sporadicCutFix = "if it is sporadic, run crisp doctor --repeat 200 to see its rate; look at the runtime's log for the streaming server's errors"

func explainTCP(f Flavour, sig, hostPort string, loopback bool) (string, string) {
	host, port := splitHostPort(hostPort)
	if sig == sigReset || sig == sigEOF {
		// Something took the connection and cut it at once: not a
		// missing server, so not a config key.
		return fmt.Sprintf("connecting to %s (the URL the runtime%s handed out) was cut as it was made: the streaming server dropped it (overload, a restart) or a proxy or firewall on the way did", hostPort, on(f)),
			sporadicCutFix + ", and at what stands between this host and " + hostPort
	}
	cause := fmt.Sprintf("the runtime%s handed out a URL at %s, but nothing accepts connections there: its streaming server is down, or listens on an address this host cannot reach", on(f), hostPort)
	if sig == sigTimeout {
		cause = fmt.Sprintf("connecting to %s got no answer: a firewall drops the packets, or the address is not this host's", hostPort)
	}
	if !loopback {
		cause += fmt.Sprintf(" (%s is not loopback: a kubelet on this node reaches it, a client elsewhere may not)", host)
	}
	return cause, forEach(f, func(k keys) string {
		where := fmt.Sprintf("%s (now %s) and %s (now %s)", k.addr, host, k.port, port)
		if k.addr == k.port { // one setting holds both
			where = fmt.Sprintf("%s (now %s)", k.addr, hostPort)
		}
		return fmt.Sprintf("set %s in %s to an address the kubelet reaches (127.0.0.1 when the kubelet runs here), then %s",
			where, k.where, k.restart)
	})
}

func explainTLS(f Flavour, sig string) (string, string) {
	server := "the streaming server" + on(f)
	cause := server + ": its certificate did not verify"
	switch sig {
	case sigTLSUnknownCA:
		cause = server + ": its certificate is signed by a CA crisp was not given"
	case sigTLSHostname:
		cause = server + ": its certificate does not name the host of the URL the runtime handed out"
	case sigTLSClientCert:
		cause = server + " wants a client certificate (mTLS) crisp did not have, or refused the one it sent"
	}
	return cause, forEach(f, func(k keys) string {
		return fmt.Sprintf("pass the CA that signed the certificate of %s with --tls-ca FILE (--tls-server-name for another name, --tls-cert/--tls-key for mTLS), or give the runtime a certificate for its streaming address (%s, with %s = true in %s)",
			k.certs, k.certs, k.tls, k.where)
	})
}

func explainUpgrade(f Flavour, sig string) (string, string) {
	switch sig {
	case "HTTP 404":
		return "the streaming server did not know the URL's token: streaming URLs are single use and expire (1 minute on cri-streaming servers), or another server answers on that port",
			"if it repeats on fresh URLs, the runtime's streaming server restarted on the same port or something else listens there (ss -ltnp)"
	case sigReset, sigEOF:
		return fmt.Sprintf("the connection to the streaming server%s was cut before it answered the upgrade: the server dropped it (overload, a restart) or a proxy or firewall on the way did", on(f)),
			sporadicCutFix
	case sigTimeout:
		return "the streaming server took the connection but did not answer the upgrade in time: it is stuck or overloaded",
			"raise --request-timeout; look at the runtime's log"
	}
	return fmt.Sprintf("the streaming server%s refused every protocol crisp offered (%s): a proxy that drops the Upgrade header, or a streaming server that refuses upgrades", on(f), sig),
		"crisp probe shows what the runtime speaks; a runtime built on cri-streaming (containerd, CRI-O) speaks SPDY v1-v4 and WebSocket v4"
}

func explainExit(code int, cmd, reason string) (string, string) {
	switch code {
	case 127:
		return fmt.Sprintf("the runtime could not find %q in the container (%s): the image does not have it, or not in its PATH (distroless images have no shell tools)", cmd, reason),
			"exec works; name a binary the image has with --command (for example the image's entrypoint), or use crisp debug for tools beside the target"
	case 126:
		return fmt.Sprintf("%q exists in the container but cannot be executed (%s): no execute permission, a directory, or a binary for another architecture", cmd, reason),
			"fix the file's mode in the image (chmod +x) or name another binary with --command"
	}
	return fmt.Sprintf("%q ran and exited %d", cmd, code), "the stream works; the command itself failed: run it with crisp exec to see its output"
}

func explainStream(f Flavour, sig string) (string, string) {
	return fmt.Sprintf("the upgraded stream%s broke before the command's exit status arrived (%s): the streaming server or the process behind it went away", on(f), sig),
		"look at the runtime's log; if it is sporadic, run crisp doctor --repeat 200 to see its rate"
}

func explainForward(f Flavour, sig string, port int32) (string, string) {
	if sig == sigRefused {
		return fmt.Sprintf("the runtime%s reached the pod's network namespace, but nothing listens on port %d there (connection refused)", on(f), port),
			fmt.Sprintf("start the server in the pod, or name the port it listens on (kubectl port-forward fails the same way: \"error forwarding port %d to pod ...: connection refused\")", port)
	}
	return fmt.Sprintf("the forwarded connection to port %d failed (%s)", port, sig),
		"run crisp port-forward -v POD PORT to see the runtime's message; look at the runtime's log"
}

func splitHostPort(hp string) (string, string) {
	i := strings.LastIndexByte(hp, ':')
	if i < 0 {
		return hp, ""
	}
	return strings.Trim(hp[:i], "[]"), hp[i+1:]
}
