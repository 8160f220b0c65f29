package doctor

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// fakeAPI is an API server for the workstation walk: the few read paths
// the walk takes, and the pod's exec, attach and portforward subresources
// proxied to the mock runtime's streaming server the way an API server
// and a kubelet proxy them (a CRI call for a fresh URL, then the upgrade
// passed through). Its fields break one hop each.
type fakeAPI struct {
	t   testing.TB
	env *mocktest.Env
	ctr string
	pod string // the CRI pod sandbox ID

	mu     sync.Mutex
	faults fakeFaults
}

// fakeFaults are the fake's answers; each field breaks one hop.
type fakeFaults struct {
	// denied are SelfSubjectAccessReviews answered no ("create pods/exec"),
	// and the subresources refused with 403.
	denied map[string]bool
	// podObj is what GET pod answers.
	podObj *corev1.Pod
	// healthz answers nodes/proxy/healthz when set: a status and a message.
	healthz *metav1.Status
	// stream answers every exec, attach and portforward when set.
	stream *metav1.Status
	// refuseWebSocket answers WebSocket upgrades 400, as a proxy that
	// speaks no WebSocket; dropUpgrade strips the Upgrade headers, as a
	// proxy that does not pass upgrades.
	refuseWebSocket, dropUpgrade bool
	// unauthorized answers everything 401.
	unauthorized bool
}

const (
	fakeNS       = "shop"
	fakePod      = "web-0"
	fakeCtr      = "web"
	fakeNode     = "node-a"
	fakeNodeIP   = "10.0.0.5"
	fakeKubelet  = 10250
	fakeUser     = "alice"
	fakeRuntimeV = "containerd://2.4.2"
)

func newFakeAPI(t *testing.T) (*fakeAPI, *kubeWalker) {
	t.Helper()
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	f := &fakeAPI{t: t, env: fx.env, ctr: fx.ctr, pod: fx.pod, faults: fakeFaults{denied: map[string]bool{}}}
	f.faults.podObj = &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fakePod, Namespace: fakeNS},
		Spec:       corev1.PodSpec{NodeName: fakeNode, Containers: []corev1.Container{{Name: fakeCtr}, {Name: "sidecar"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: fakeCtr, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}},
		}},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	w, err := newKubeWalker(&rest.Config{Host: srv.URL}, fakeNS, fakePod, "", nil, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w.attachWindow = defaultAttachWindow
	return f, w
}

func (f *fakeAPI) set(fn func(ff *fakeFaults)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.faults)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func status(code int, reason metav1.StatusReason, msg string) *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg}
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	ff := f.faults // the map and pointers are only replaced, never changed in place, once a walk runs
	f.mu.Unlock()
	if ff.unauthorized {
		writeJSON(w, 401, status(401, metav1.StatusReasonUnauthorized, "Unauthorized"))
		return
	}
	podPath := "/api/v1/namespaces/" + fakeNS + "/pods/" + fakePod
	switch p := r.URL.Path; {
	case p == "/version":
		writeJSON(w, 200, map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
	case p == "/apis/authentication.k8s.io/v1/selfsubjectreviews":
		writeJSON(w, 201, authnv1.SelfSubjectReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"},
			Status: authnv1.SelfSubjectReviewStatus{UserInfo: authnv1.UserInfo{Username: fakeUser, Groups: []string{"dev", "system:authenticated"}}}})
	case p == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
		var in authzv1.SelfSubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeJSON(w, 400, status(400, metav1.StatusReasonBadRequest, err.Error()))
			return
		}
		a := in.Spec.ResourceAttributes
		res := a.Resource
		if a.Subresource != "" {
			res += "/" + a.Subresource
		}
		in.Status.Allowed = !ff.denied[a.Verb+" "+res] && a.Namespace == fakeNS
		writeJSON(w, 201, in)
	case p == podPath:
		writeJSON(w, 200, ff.podObj)
	case p == "/api/v1/namespaces/kube-system/pods":
		writeJSON(w, 403, status(403, metav1.StatusReasonForbidden, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system"`))
	case p == "/api/v1/nodes/"+fakeNode:
		writeJSON(w, 200, &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: fakeNode},
			Status: corev1.NodeStatus{
				DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: fakeKubelet}},
				Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fakeNodeIP}, {Type: corev1.NodeHostName, Address: fakeNode}},
				NodeInfo:        corev1.NodeSystemInfo{ContainerRuntimeVersion: fakeRuntimeV},
				Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			}})
	case p == "/api/v1/nodes/"+fakeNode+"/proxy/healthz":
		if ff.healthz != nil {
			writeJSON(w, int(ff.healthz.Code), ff.healthz)
			return
		}
		_, _ = w.Write([]byte("ok"))
	case strings.HasPrefix(p, podPath+"/"):
		f.proxyStream(w, r, ff, strings.TrimPrefix(p, podPath+"/"))
	default:
		writeJSON(w, 404, status(404, metav1.StatusReasonNotFound, "the server could not find the requested resource"))
	}
}

// stream proxies a subresource to a fresh streaming URL of the mock, as
// the kubelet does, unless a fault answers first.
func (f *fakeAPI) proxyStream(w http.ResponseWriter, r *http.Request, ff fakeFaults, sub string) {
	if ff.denied["create pods/"+sub] {
		writeJSON(w, 403, status(403, metav1.StatusReasonForbidden, `pods "`+fakePod+`" is forbidden: User "alice" cannot create resource "pods/`+sub+`" in API group "" in the namespace "`+fakeNS+`"`))
		return
	}
	if ff.stream != nil {
		writeJSON(w, int(ff.stream.Code), ff.stream)
		return
	}
	if ff.refuseWebSocket && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		http.Error(w, "websocket upgrades are not allowed here", http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	var raw string
	var err error
	ctx := r.Context()
	switch sub {
	case "exec":
		var resp *runtimeapi.ExecResponse
		resp, err = f.env.CRI.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: f.ctr, Cmd: q["command"], Stdout: true, Stderr: true})
		raw = resp.GetUrl()
	case "attach":
		var resp *runtimeapi.AttachResponse
		resp, err = f.env.CRI.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: f.ctr, Stdout: true, Stderr: true})
		raw = resp.GetUrl()
	case "portforward":
		var resp *runtimeapi.PortForwardResponse
		resp, err = f.env.CRI.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: f.pod})
		raw = resp.GetUrl()
	default:
		writeJSON(w, 404, status(404, metav1.StatusReasonNotFound, "no such subresource "+strconv.Quote(sub)))
		return
	}
	if err != nil {
		writeJSON(w, 500, status(500, metav1.StatusReasonInternalError, err.Error()))
		return
	}
	target, err := url.Parse(raw)
	if err != nil {
		writeJSON(w, 500, status(500, metav1.StatusReasonInternalError, err.Error()))
		return
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL = target
		pr.Out.Host = target.Host
		if ff.dropUpgrade {
			pr.Out.Header.Del("Upgrade")
			pr.Out.Header.Del("Connection")
		}
	}}
	rp.ServeHTTP(w, r)
}
