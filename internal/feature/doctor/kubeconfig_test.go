package doctor

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

func TestKubeHealthyPassesEveryHop(t *testing.T) {
	_, w := newFakeAPI(t)
	w.port = int32(testkit.Echo(t))
	hops := w.walk(context.Background())
	want := "api-server=pass user=pass rbac=pass pod=pass node=pass kubelet=pass upgrade-websocket-v5=pass upgrade-spdy=pass exec=pass attach=pass port-forward=pass"
	if got := names(hops); got != want {
		t.Fatalf("hops\n got %s\nwant %s\n%+v", got, want, hops)
	}
	by := byName(hops)
	contains(t, "user", by[HopUser].Detail, `"alice"`, "dev")
	contains(t, "pod", by[HopPod].Detail, "on node node-a", "container web running")
	contains(t, "node", by[HopNode].Detail, "kubelet port 10250", "InternalIP=10.0.0.5", "containerd://2.4.2",
		"10.0.0.5:10250 (InternalIP) with kubeadm's", "node-a:10250 (Hostname) with its default")
	contains(t, "exec", by[HopExec].Detail, `"true" exited 0 over WebSocket v5`)
	contains(t, "port-forward", by[HopPortForward].Detail, "answered", "SPDY/3.1+portforward.k8s.io")
	if w.flavour != Containerd2 {
		t.Errorf("flavour from the node's runtime: %s", w.flavour)
	}
}

func byName(hops []Hop) map[string]Hop {
	m := map[string]Hop{}
	for _, h := range hops {
		m[h.Name] = h
	}
	return m
}

func TestKubeMissingExecPermissionNamesTheGrant(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) { ff.denied = map[string]bool{"create pods/exec": true} })
	h := failedAt(t, w.walk(context.Background()), HopRBAC)
	contains(t, "error", h.Error, "denied: create pods/exec")
	contains(t, "cause", h.Cause, `"alice"`, "create pods/exec", "namespace shop")
	contains(t, "fix", h.Fix, "kubectl create role crisp-doctor-create -n shop --verb=create --resource=pods/exec",
		"kubectl create rolebinding crisp-doctor-create -n shop --role=crisp-doctor-create --user=alice")
}

// Without --port, a missing pods/portforward is a warning: exec works.
func TestKubeMissingPortForwardWarnsWithoutPort(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) { ff.denied = map[string]bool{"create pods/portforward": true} })
	hops := w.walk(context.Background())
	if h := byName(hops)[HopRBAC]; h.Outcome != Warn {
		t.Fatalf("rbac: %+v", h)
	}
	if h := hops[len(hops)-1]; h.Name != HopPortForward || h.Outcome != Skip {
		t.Fatalf("the walk went on to the end: %s", names(hops))
	}
	w.port = 80
	failedAt(t, w.walk(context.Background()), HopRBAC)
}

func TestKubeServiceAccountGrantUsesServiceAccountFlag(t *testing.T) {
	_, fix := explainRBAC("ns", "system:serviceaccount:ci:runner", nil, []permission{permGetPod, permAttach})
	contains(t, "fix", fix, "--verb=get --resource=pods", "--verb=create --resource=pods/attach", "--serviceaccount=ci:runner")
}

func TestKubeStoppedContainerFailsAtPod(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) {
		p := ff.podObj.DeepCopy()
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
		ff.podObj = p
	})
	h := failedAt(t, w.walk(context.Background()), HopPod)
	contains(t, "error", h.Error, "container web has terminated: exit code 137, reason OOMKilled")
	contains(t, "fix", h.Fix, "kubectl describe pod -n shop web-0", "logs --previous")
}

func TestKubeUnknownContainerListsThePodsContainers(t *testing.T) {
	_, w := newFakeAPI(t)
	w.container = "nope"
	h := failedAt(t, w.walk(context.Background()), HopPod)
	contains(t, "error", h.Error, `no container "nope"`, "web, sidecar")
}

func TestKubeNodesProxyForbiddenIsANote(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) {
		ff.healthz = status(403, metav1.StatusReasonForbidden, `nodes "node-a" is forbidden: User "alice" cannot get resource "nodes/proxy"`)
	})
	hops := w.walk(context.Background())
	if h := byName(hops)[HopKubelet]; h.Outcome != Note {
		t.Fatalf("kubelet: %+v", h)
	}
	if h := hops[len(hops)-1]; h.Failed() {
		t.Fatalf("the walk failed at %s: %+v", h.Name, h)
	}
}

// The API server cannot reach the kubelet: the dialed address is the
// kubelet's endpoint, and the explanation says which address type.
func TestKubeKubeletUnreachable(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) {
		ff.healthz = status(503, metav1.StatusReasonServiceUnavailable, "error trying to reach service: dial tcp 10.0.0.5:10250: connect: connection refused")
	})
	h := failedAt(t, w.walk(context.Background()), HopKubelet)
	if h.Signature != sigKubeletUnreach {
		t.Errorf("signature %q", h.Signature)
	}
	contains(t, "cause", h.Cause, "cannot reach the kubelet of node-a at 10.0.0.5:10250 (the node's InternalIP)")
	contains(t, "fix", h.Fix, "nc -vz 10.0.0.5 10250", "--kubelet-preferred-address-types")
}

// "error dialing backend" naming another address is the kubelet failing
// to reach the runtime's streaming server (kubectl's one line for both).
func TestKubeStreamingServerUnreachableFromTheKubelet(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) {
		ff.stream = status(500, metav1.StatusReasonInternalError, "error dialing backend: dial tcp 127.0.0.1:46033: connect: connection refused")
	})
	hops := w.walk(context.Background())
	h := failedAt(t, hops, "upgrade-spdy")
	if v5 := byName(hops)["upgrade-websocket-v5"]; v5.Outcome != Note {
		t.Errorf("v5: %+v", v5)
	}
	if h.Signature != sigStreamUnreachable {
		t.Errorf("signature %q", h.Signature)
	}
	contains(t, "cause", h.Cause, "kubelet of node-a", "streaming server at 127.0.0.1:46033")
	contains(t, "fix", h.Fix, "stream_server_address", "io.containerd.grpc.v1.cri")
}

func TestKubeDebuggingHandlersDisabled(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) {
		ff.stream = status(405, metav1.StatusReasonMethodNotAllowed, "Debug endpoints are disabled.")
	})
	h := failedAt(t, w.walk(context.Background()), "upgrade-spdy")
	if h.Signature != sigDebugDisabled {
		t.Errorf("signature %q", h.Signature)
	}
	contains(t, "fix", h.Fix, "enableDebuggingHandlers: true", "restart the kubelet")
}

func TestKubeExecForbiddenAtTheStream(t *testing.T) {
	f, w := newFakeAPI(t)
	// The review says yes, the API server no: an authorizer webhook that
	// answers reviews differently, or a change between the two.
	f.set(func(ff *fakeFaults) {
		ff.stream = status(403, metav1.StatusReasonForbidden, `pods "web-0" is forbidden: User "alice" cannot create resource "pods/exec"`)
	})
	h := failedAt(t, w.walk(context.Background()), "upgrade-spdy")
	if h.Signature != sigForbidden {
		t.Errorf("signature %q", h.Signature)
	}
	contains(t, "fix", h.Fix, "kubectl create role", "--user=alice")
}

// A proxy that speaks no WebSocket: kubectl falls back to SPDY, a note.
func TestKubeWebSocketRefusedIsAFallback(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) { ff.refuseWebSocket = true })
	hops := w.walk(context.Background())
	by := byName(hops)
	if v5 := by["upgrade-websocket-v5"]; v5.Outcome != Note || v5.Signature != "HTTP 400" {
		t.Fatalf("v5: %+v", v5)
	}
	if h := hops[len(hops)-1]; h.Failed() {
		t.Fatalf("failed at %s: %+v", h.Name, h)
	}
	contains(t, "exec", by[HopExec].Detail, "SPDY (after the WebSocket upgrade failed: fallback)")
	contains(t, "attach", by[HopAttach].Detail, "SPDY")
}

// A proxy that drops the Upgrade headers: the request reaches the
// streaming server as a plain request.
func TestKubeUpgradeHeadersDropped(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) { ff.dropUpgrade = true })
	h := failedAt(t, w.walk(context.Background()), "upgrade-spdy")
	if h.Signature != sigUpgradeDropped {
		t.Errorf("signature %q (error %q)", h.Signature, h.Error)
	}
	contains(t, "fix", h.Fix, "proxy_set_header Upgrade")

	// The API server's own words for it (Kubernetes 1.37, from the
	// kubelet suite's run).
	f.set(func(ff *fakeFaults) {
		ff.dropUpgrade = false
		ff.stream = status(400, metav1.StatusReasonBadRequest, "Upgrade request required")
	})
	h = failedAt(t, w.walk(context.Background()), "upgrade-spdy")
	if h.Signature != sigUpgradeDropped {
		t.Errorf("signature %q (error %q)", h.Signature, h.Error)
	}
}

func TestKubeMissingBinaryIs127(t *testing.T) {
	_, w := newFakeAPI(t)
	w.cmd = []string{"/no/such/binary"}
	h := failedAt(t, w.walk(context.Background()), HopExec)
	if h.Signature != "exit 127" {
		t.Errorf("signature %q (error %q)", h.Signature, h.Error)
	}
	contains(t, "cause", h.Cause, "could not find")
}

func TestKubeBadCredentials(t *testing.T) {
	f, w := newFakeAPI(t)
	f.set(func(ff *fakeFaults) { ff.unauthorized = true })
	h := failedAt(t, w.walk(context.Background()), HopAPIServer)
	if h.Signature != sigUnauthorized {
		t.Errorf("signature %q", h.Signature)
	}
	contains(t, "fix", h.Fix, "renew the credentials")
}

func TestKubeAPIServerDown(t *testing.T) {
	_, w := newFakeAPI(t)
	w2, err := newKubeWalker(&rest.Config{Host: "http://127.0.0.1:1"}, fakeNS, fakePod, "", nil, 0, w.hopTimeout)
	if err != nil {
		t.Fatal(err)
	}
	h := failedAt(t, w2.walk(context.Background()), HopAPIServer)
	if h.Signature != sigRefused {
		t.Errorf("signature %q", h.Signature)
	}
	contains(t, "cause", h.Cause, "nothing answers at http://127.0.0.1:1")
}

func TestKubePortNotListening(t *testing.T) {
	_, w := newFakeAPI(t)
	w.port = int32(freePort(t))
	h := failedAt(t, w.walk(context.Background()), HopPortForward)
	contains(t, "cause (error "+h.Error+")", h.Cause, "nothing listens on port")
}

// Kubernetes 1.37's kubelet words a streaming server it cannot reach as
// "error sending request: Post URL: ..." (these are its words, from the
// kubelet suite's run): the URL's address is the runtime's, not the
// kubelet's, connection refused or TLS alike.
func TestKubeKubeletSendingToTheStreamingServer(t *testing.T) {
	for _, c := range []struct{ msg, sig, cause, fix string }{
		{`error sending request: Post "http://127.0.0.1:35095/exec/FQBZccPh": dial tcp 127.0.0.1:35095: connect: connection refused`,
			sigStreamUnreachable, "streaming server at 127.0.0.1:35095", "stream_server_address"},
		{`error sending request: Post "https://127.0.0.1:37965/exec/6xLZUqWx": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
			sigStreamTLS, "does not trust the TLS certificate", "enable_tls_streaming"},
	} {
		f, w := newFakeAPI(t)
		f.set(func(ff *fakeFaults) {
			ff.stream = status(500, metav1.StatusReasonInternalError, "Internal error occurred: "+c.msg)
		})
		hops := w.walk(context.Background())
		h := hops[len(hops)-1]
		if !h.Failed() || h.Signature != c.sig {
			t.Errorf("%s: hops %s, last %+v", c.msg, names(hops), h)
			continue
		}
		contains(t, "cause", h.Cause, c.cause)
		contains(t, "fix", h.Fix, c.fix)
		contains(t, "error", h.Error, "/exec/REDACTED")
	}
}
