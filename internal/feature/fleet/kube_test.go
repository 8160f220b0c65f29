package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// apiServer serves the few endpoints a run uses, as the API server does,
// and records the requests.
type apiServer struct {
	mu   sync.Mutex
	reqs []string
	pod  corev1.Pod
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	if q.Get("timeout") != "1m0s" {
		s.reqs = append(s.reqs, "no timeout: ")
	}
	q.Del("timeout") // every request carries it: the rest of the query is what matters
	s.reqs = append(s.reqs, r.Method+" "+r.URL.Path+"?"+q.Encode())
	w.Header().Set("Content-Type", "application/json")
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	switch {
	case r.Method == "GET" && r.URL.Path == "/api/v1/nodes":
		write(corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, Items: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}}})
	case r.Method == "GET" && r.URL.Path == "/api/v1/nodes/ghost":
		w.WriteHeader(http.StatusNotFound)
		write(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Reason: metav1.StatusReasonNotFound, Code: 404, Message: `nodes "ghost" not found`})
	case r.Method == "POST" && r.URL.Path == "/api/v1/namespaces/ns/pods":
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &s.pod)
		if !strings.Contains(string(body), `"kind":"Pod","apiVersion":"v1"`) {
			s.reqs = append(s.reqs, "a pod without its kind and apiVersion: "+string(body[:min(len(body), 80)]))
		}
		w.WriteHeader(http.StatusCreated)
		write(s.pod)
	case r.Method == "GET" && r.URL.Path == "/api/v1/namespaces/ns/pods":
		write(corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{s.pod}})
	case r.Method == "DELETE" && r.URL.Path == "/api/v1/namespaces/ns/pods":
		body, _ := io.ReadAll(r.Body)
		s.reqs[len(s.reqs)-1] += " " + strings.TrimSpace(string(body))
		write(corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}})
	case r.Method == "GET" && r.URL.Path == "/api/v1/namespaces/ns/pods/p1/log":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "line one\n{\"kind\":\"smoke\"}\n")
	case r.Method == "GET" && r.URL.Path == "/api/v1/namespaces/ns/events":
		write(corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}, Items: []corev1.Event{{Reason: "FailedMount", Type: "Warning"}}})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func TestKubeAgainstAPIServer(t *testing.T) {
	s := &apiServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	k, err := NewKube(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nodes, err := k.ListNodes(ctx, "pool=a")
	if err != nil || len(nodes) != 1 || nodes[0].Name != "node-a" {
		t.Fatalf("nodes %+v err %v", nodes, err)
	}
	if _, err := k.GetNode(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing node: %v, want ErrNotFound", err)
	}
	r, _ := runner(nil, 0)
	r.Namespace = "ns"
	pod := r.PodFor(Placement{Node: "node-a", Port: 7777, Socket: "/run/containerd/containerd.sock"}, "1m")
	if err := k.CreatePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if s.pod.Spec.NodeName != "node-a" || s.pod.Spec.Containers[0].Image != "crisp:dev" {
		t.Errorf("the server got %+v", s.pod.Spec)
	}
	pods, err := k.ListPods(ctx, "ns", RunLabel+"=abc123")
	if err != nil || len(pods) != 1 || pods[0].Name != pod.Name {
		t.Errorf("pods %d err %v", len(pods), err)
	}
	log, err := k.PodLog(ctx, "ns", "p1", CrispContainer, 12)
	if err != nil || string(log) != "line one\n{\"k" {
		t.Errorf("log %q err %v: want the first 12 bytes", log, err)
	}
	evs, err := k.PodEvents(ctx, "ns", "p1")
	if err != nil || len(evs) != 1 || evs[0].Reason != "FailedMount" {
		t.Errorf("events %+v err %v", evs, err)
	}
	if err := k.DeletePods(ctx, "ns", RunLabel+"=abc123"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /api/v1/nodes?labelSelector=pool%3Da",
		"GET /api/v1/nodes/ghost?",
		"POST /api/v1/namespaces/ns/pods?",
		"GET /api/v1/namespaces/ns/pods?labelSelector=crisp-fleet-run%3Dabc123",
		"GET /api/v1/namespaces/ns/pods/p1/log?container=crisp&limitBytes=12",
		"GET /api/v1/namespaces/ns/events?fieldSelector=involvedObject.kind%3DPod%2CinvolvedObject.name%3Dp1",
		`DELETE /api/v1/namespaces/ns/pods?labelSelector=crisp-fleet-run%3Dabc123 {"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":1}`,
	}
	if strings.Join(s.reqs, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(s.reqs, "\n"), strings.Join(want, "\n"))
	}
}

func TestKubeconfigLoading(t *testing.T) {
	dir := t.TempDir()
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
- name: other
  cluster: {server: "https://10.0.0.1:6443"}
users:
- name: u
  user: {token: secret}
contexts:
- name: main
  context: {cluster: c, user: u, namespace: crisp}
- name: second
  context: {cluster: other, user: u}
current-context: main
`
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, ns, err := KubeconfigOptions{Kubeconfig: path}.Load()
	if err != nil || rc.Host != "https://127.0.0.1:6443" || ns != "crisp" || rc.BearerToken != "secret" {
		t.Errorf("current context: host %v ns %q err %v", rc, ns, err)
	}
	rc, ns, err = KubeconfigOptions{Kubeconfig: path, Context: "second", Namespace: "x"}.Load()
	if err != nil || rc.Host != "https://10.0.0.1:6443" || ns != "x" {
		t.Errorf("--context second -n x: host %v ns %q err %v", rc, ns, err)
	}
	t.Setenv("KUBECONFIG", path)
	if rc, _, err = (KubeconfigOptions{}).Load(); err != nil || rc.Host != "https://127.0.0.1:6443" {
		t.Errorf("$KUBECONFIG: %v %v", rc, err)
	}
	if _, _, err := (KubeconfigOptions{Kubeconfig: filepath.Join(dir, "nope")}).Load(); err == nil || !strings.Contains(err.Error(), "no usable kubeconfig") {
		t.Errorf("a missing kubeconfig: %v", err)
	}
}
