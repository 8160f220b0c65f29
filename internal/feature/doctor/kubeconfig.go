package doctor

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
)

// The workstation hops, in the order the path is walked; the streaming
// hops after them (upgrade-websocket-v5, upgrade-spdy, exec, attach,
// port-forward) carry the node walk's names.
const (
	HopAPIServer = "api-server"
	HopUser      = "user"
	HopRBAC      = "rbac"
	HopPod       = "pod"
	HopNode      = "node"
	HopKubelet   = "kubelet"
)

// Kube is one `crisp doctor --kubeconfig [NS/]POD` from a workstation: the
// path kubectl exec, attach and port-forward take through the API server
// and the kubelet. cmd/crisp binds the flags to its fields.
type Kube struct {
	// Connect loads the kubeconfig: the REST config and the namespace to
	// use (cmd/crisp gives fleet's loader, kubectl's rules).
	Connect func() (*rest.Config, string, error)
	// Pod is [NS/]POD; Container the container (else the pod's default
	// container, as kubectl picks it).
	Pod       string
	Container string
	Port      int32
	Command   string
	Repeat    Repeated
	// HopTimeout bounds each hop.
	HopTimeout time.Duration
	JUnit      string
	NodeName   string
	// NodeSide, when set, runs the node half on the pod's node
	// (--node-side) and the report holds both.
	NodeSide NodeSide
}

// Run walks the path (Repeat.Runs times) and delivers the report as
// Node.Run does.
func (o *Kube) Run(ctx context.Context, f *cmdutil.Factory) error {
	cfg, ns, err := o.Connect()
	if err != nil {
		return err
	}
	pod := o.Pod
	if n, p, ok := strings.Cut(o.Pod, "/"); ok {
		ns, pod = n, p
	}
	w, err := newKubeWalker(cfg, ns, pod, o.Container, strings.Fields(o.Command), o.Port, o.HopTimeout)
	if err != nil {
		return err
	}
	started := time.Now()
	rep := newReport(ModeKubeconfig, o.NodeName)
	runErr := repeatWalk(ctx, rep, o.Repeat, w.walk)
	w.stamp(rep)
	if rep.Node == "" {
		rep.Node = rep.Target.Node
	}
	if o.NodeSide != nil && runErr == nil {
		rep.NodeSide = w.nodeSide(ctx, o.NodeSide, o)
	}
	return deliver(f, rep, o.JUnit, started, runErr)
}

// kubeWalker walks the workstation path once per run.
type kubeWalker struct {
	api                *kubeAPI
	ns, pod, container string
	cmd                []string
	port               int32
	hopTimeout         time.Duration
	attachWindow       time.Duration

	// What the walk learned, for later hops' explanations.
	server   string
	version  string
	user     string
	groups   []string
	nodeName string
	// containerID is the container's, as its runtime knows it (the pod's
	// status carries it as RUNTIME://ID).
	containerID string
	// kubelet is the kubelet's endpoint as the node reports it: port and
	// addresses by type; flavour the node's runtime.
	kubeletPort int32
	addresses   []corev1.NodeAddress
	addrTypes   string
	flavour     Flavour
	runtimeName string
}

func newKubeWalker(cfg *rest.Config, ns, pod, container string, cmd []string, port int32, hopTimeout time.Duration) (*kubeWalker, error) {
	api, err := newKubeAPI(cfg)
	if err != nil {
		return nil, err
	}
	if len(cmd) == 0 {
		cmd = []string{DefaultCommand}
	}
	if hopTimeout <= 0 {
		hopTimeout = client.DefaultRequestTimeout
	}
	return &kubeWalker{api: api, ns: ns, pod: pod, container: container, cmd: cmd, port: port,
		hopTimeout: hopTimeout, attachWindow: defaultAttachWindow, server: cfg.Host, flavour: Unknown}, nil
}

// stamp fills the report's target and cluster from what the walk learned.
func (w *kubeWalker) stamp(rep *Report) {
	rep.Target = Target{Namespace: w.ns, Pod: w.pod, Container: w.container, Node: w.nodeName, Port: w.port, Command: w.cmd}
	rep.Cluster = &Cluster{Server: w.server, Version: w.version, User: w.user, Groups: w.groups}
	if w.runtimeName != "" {
		rep.Runtime = Runtime{Name: w.runtimeName, Flavour: w.flavour}
	}
}

func (w *kubeWalker) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, w.hopTimeout)
}

// walk runs the path once and returns its hops, up to the first failure.
func (w *kubeWalker) walk(ctx context.Context) []Hop {
	r := &run{}
	for _, hop := range []func(context.Context) Hop{w.apiHop, w.userHop, w.rbacHop, w.podHop, w.nodeHop, w.kubeletHop} {
		if !r.add(hop(ctx)) {
			return r.hops
		}
	}
	if !w.kubeUpgradeHops(ctx, r) {
		return r.hops
	}
	if !r.add(w.kubeExecHop(ctx)) || !r.add(w.kubeAttachHop(ctx)) {
		return r.hops
	}
	r.add(w.kubeForwardHop(ctx))
	return r.hops
}

// apiHop is GET /version: the API server answers, and which version.
func (w *kubeWalker) apiHop(ctx context.Context) Hop {
	return timed(HopAPIServer, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		v, err := w.api.version(ctx)
		if err != nil {
			w.kubeFail(h, "GET "+w.server+"/version", err)
			return
		}
		w.version = v.GitVersion
		h.Detail = fmt.Sprintf("%s answered: Kubernetes %s", w.server, v.GitVersion)
	})
}

// userHop is a SelfSubjectReview: who the API server takes the user for.
// An API server without the API (before 1.28) is a note.
func (w *kubeWalker) userHop(ctx context.Context) Hop {
	return timed(HopUser, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		ssr, err := w.api.whoami(ctx)
		if err != nil {
			if code := statusCode(err); code == 404 || code == 403 {
				h.Outcome, h.Signature = Note, "HTTP "+strconv.Itoa(code)
				h.Error = err.Error()
				h.Detail = "the API server did not say who the user is (SelfSubjectReview, authentication.k8s.io/v1, served from Kubernetes 1.28)"
				return
			}
			w.kubeFail(h, "SelfSubjectReview (authentication.k8s.io/v1) at "+w.server, err)
			return
		}
		ui := ssr.Status.UserInfo
		w.user, w.groups = ui.Username, ui.Groups
		h.Detail = fmt.Sprintf("user %q, groups %s", ui.Username, strings.Join(ui.Groups, ","))
	})
}

// The permissions kubectl exec, attach and port-forward need in the pod's
// namespace: get the pod (kubectl reads it first), then create on each
// subresource.
var (
	permGetPod      = permission{verb: "get", resource: "pods"}
	permExec        = permission{verb: "create", resource: "pods", sub: "exec"}
	permAttach      = permission{verb: "create", resource: "pods", sub: "attach"}
	permPortForward = permission{verb: "create", resource: "pods", sub: "portforward"}
)

// rbacHop asks SelfSubjectAccessReviews for each permission. A missing
// one fails (port-forward's only with --port, else it warns) and the fix
// is the kubectl lines that grant it.
func (w *kubeWalker) rbacHop(ctx context.Context) Hop {
	return timed(HopRBAC, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		var allowed, denied []string
		var missing []permission
		var reasons []string
		for _, p := range []permission{permGetPod, permExec, permAttach, permPortForward} {
			st, err := w.api.mayI(ctx, w.ns, p)
			if err != nil {
				h.Outcome, h.Signature, h.Error = Note, w.kubeSignature(err), err.Error()
				h.Detail = "the API server did not answer SelfSubjectAccessReview: the permissions show at the hops below"
				return
			}
			if st.Allowed {
				allowed = append(allowed, p.String())
				continue
			}
			denied = append(denied, p.String())
			missing = append(missing, p)
			if st.Reason != "" {
				reasons = append(reasons, st.Reason)
			}
		}
		h.Detail = fmt.Sprintf("may %s in namespace %s", strings.Join(allowed, ", "), w.ns)
		if len(missing) == 0 {
			return
		}
		h.Tried = fmt.Sprintf("SelfSubjectAccessReview of %s in namespace %s as %q", strings.Join(append(allowed, denied...), ", "), w.ns, w.user)
		h.Error = "denied: " + strings.Join(denied, ", ")
		if len(reasons) > 0 {
			h.Error += " (" + strings.Join(reasons, "; ") + ")"
		}
		h.Signature = "HTTP 403"
		h.Cause, h.Fix = explainRBAC(w.ns, w.user, w.groups, missing)
		h.Outcome = Fail
		if len(missing) == 1 && missing[0] == permPortForward && w.port == 0 {
			h.Outcome = Warn // port-forward is not asked for: kubectl port-forward would fail, exec works
		}
	})
}

// podHop reads the pod: it exists, is scheduled, and the container runs.
func (w *kubeWalker) podHop(ctx context.Context) Hop {
	return timed(HopPod, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		tried := fmt.Sprintf("GET pod %s/%s", w.ns, w.pod)
		p, err := w.api.pod(ctx, w.ns, w.pod)
		if err != nil {
			w.kubeFail(h, tried, err)
			if statusCode(err) == 404 {
				h.Signature = sigNotFound
				h.Cause = fmt.Sprintf("there is no pod %q in namespace %q", w.pod, w.ns)
				h.Fix = "list the pods with kubectl get pods -n " + w.ns + " and name one as [NAMESPACE/]POD (or with -n)"
			}
			return
		}
		w.nodeName = p.Spec.NodeName
		ctr, err := defaultContainer(p, w.container)
		if err != nil {
			h.Outcome, h.Tried, h.Error, h.Signature = Fail, tried, err.Error(), sigNotFound
			h.Cause = err.Error()
			h.Fix = "name one of the pod's containers with --container"
			return
		}
		w.container = ctr
		w.containerID = containerID(p, ctr)
		what, sig, ok := containerState(p, ctr)
		switch {
		case p.Spec.NodeName == "":
			h.Outcome, h.Tried, h.Error, h.Signature = Fail, tried, fmt.Sprintf("pod %s/%s is not scheduled to a node (phase %s)", w.ns, w.pod, p.Status.Phase), "not scheduled"
			h.Cause = "exec, attach and port-forward go to the kubelet of the pod's node, and the pod has none yet"
			h.Fix = "kubectl describe pod -n " + w.ns + " " + w.pod + " says why the scheduler placed it nowhere"
		case !ok:
			h.Outcome, h.Tried, h.Error, h.Signature = Fail, tried, what, sig
			h.Cause, h.Fix = explainTarget(sigNotRunning, what)
			h.Fix = "kubectl describe pod -n " + w.ns + " " + w.pod + " and kubectl logs --previous -n " + w.ns + " " + w.pod + " -c " + ctr + " say why; " + h.Fix
		default:
			h.Detail = fmt.Sprintf("pod %s/%s (phase %s) on node %s; container %s %s", w.ns, w.pod, p.Status.Phase, p.Spec.NodeName, ctr, what)
		}
	})
}

// containerID is the runtime's ID of the pod's container name ("" before
// it was created): the status says containerd://ID or cri-o://ID.
func containerID(p *corev1.Pod, name string) string {
	for _, st := range append(append([]corev1.ContainerStatus{}, p.Status.ContainerStatuses...), p.Status.EphemeralContainerStatuses...) {
		if st.Name == name {
			_, id, _ := strings.Cut(st.ContainerID, "://")
			return id
		}
	}
	return ""
}

// defaultContainer picks the container as kubectl does: the one named,
// else the kubectl.kubernetes.io/default-container annotation, else the
// first.
func defaultContainer(p *corev1.Pod, named string) (string, error) {
	var names []string
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range p.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if named == "" {
		named = p.Annotations["kubectl.kubernetes.io/default-container"]
	}
	if named == "" && len(p.Spec.Containers) > 0 {
		return p.Spec.Containers[0].Name, nil
	}
	if slices.Contains(names, named) {
		return named, nil
	}
	return "", fmt.Errorf("pod %s/%s has no container %q (it has %s)", p.Namespace, p.Name, named, strings.Join(names, ", "))
}

// containerState says whether the container runs, and if not, how it is.
func containerState(p *corev1.Pod, ctr string) (string, string, bool) {
	statuses := slices.Concat(p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses)
	for _, cs := range statuses {
		if cs.Name != ctr {
			continue
		}
		switch s := cs.State; {
		case s.Running != nil:
			return fmt.Sprintf("running since %s", s.Running.StartedAt.UTC().Format(time.RFC3339)), "", true
		case s.Waiting != nil:
			return fmt.Sprintf("container %s is waiting: %s %s", ctr, s.Waiting.Reason, s.Waiting.Message), sigNotRunning, false
		case s.Terminated != nil:
			return fmt.Sprintf("container %s has terminated: exit code %d, reason %s %s", ctr, s.Terminated.ExitCode, s.Terminated.Reason, s.Terminated.Message), sigNotRunning, false
		}
	}
	return fmt.Sprintf("container %s has no status yet (pod phase %s)", ctr, p.Status.Phase), sigNotRunning, false
}

// nodeHop reads the pod's node: the kubelet's endpoint, the addresses the
// API server dials it at, its runtime and readiness. A user who may not
// read nodes gets a note and the walk goes on.
func (w *kubeWalker) nodeHop(ctx context.Context) Hop {
	return timed(HopNode, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		n, err := w.api.node(ctx, w.nodeName)
		if err != nil {
			if statusCode(err) == 403 {
				h.Outcome, h.Signature, h.Error = Note, "HTTP 403", err.Error()
				h.Detail = "may not read node " + w.nodeName + ": its kubelet's address and port stay unknown (the hops below still take the path)"
				return
			}
			w.kubeFail(h, "GET node "+w.nodeName, err)
			return
		}
		w.kubeletPort = n.Status.DaemonEndpoints.KubeletEndpoint.Port
		w.addresses = n.Status.Addresses
		w.runtimeName = n.Status.NodeInfo.ContainerRuntimeVersion
		if name, ver, ok := strings.Cut(w.runtimeName, "://"); ok {
			w.flavour = FlavourOf(name, ver)
		}
		w.addrTypes = w.api.preferredAddressTypes(ctx)
		h.Detail = fmt.Sprintf("node %s: kubelet port %d, %s; runtime %s; %s", w.nodeName, w.kubeletPort,
			describeAddresses(w.addresses), w.runtimeName, w.dialedDescription())
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				h.Outcome, h.Signature = Warn, sigNotReady
				h.Error = fmt.Sprintf("node %s is not Ready (%s): %s %s", w.nodeName, c.Status, c.Reason, c.Message)
				h.Cause = "the kubelet has not reported the node healthy: it is down, cannot reach the API server, or its runtime is not ready"
				h.Fix = "on the node: systemctl status kubelet and journalctl -u kubelet; crisp doctor there checks the runtime"
			}
		}
	})
}

// describeAddresses lists a node's addresses by type.
func describeAddresses(addrs []corev1.NodeAddress) string {
	var s []string
	for _, a := range addrs {
		s = append(s, fmt.Sprintf("%s=%s", a.Type, a.Address))
	}
	if len(s) == 0 {
		return "no addresses"
	}
	return "addresses " + strings.Join(s, " ")
}

// dialed is the kubelet address the API server dials: the first of its
// preferred types the node has (types: its flag, else the default).
func (w *kubeWalker) dialed(types string) (string, corev1.NodeAddressType) {
	for t := range strings.SplitSeq(types, ",") {
		for _, a := range w.addresses {
			if string(a.Type) == strings.TrimSpace(t) {
				return net.JoinHostPort(a.Address, strconv.Itoa(int(w.kubeletPort))), a.Type
			}
		}
	}
	return "", ""
}

// dialedDescription says which address the API server dials the kubelet
// at, from its flag when the walk could read it, else for the default and
// for kubeadm's setting.
func (w *kubeWalker) dialedDescription() string {
	if w.addrTypes != "" {
		addr, t := w.dialed(w.addrTypes)
		return fmt.Sprintf("the API server (--kubelet-preferred-address-types=%s) dials the kubelet at %s (%s)", w.addrTypes, addr, t)
	}
	def, dt := w.dialed(defaultAddressTypes)
	kubeadm, kt := w.dialed(kubeadmAddressTypes)
	if def == kubeadm {
		return fmt.Sprintf("the API server dials the kubelet at %s (%s)", def, dt)
	}
	return fmt.Sprintf("the API server dials the kubelet at %s (%s) with its default --kubelet-preferred-address-types, at %s (%s) with kubeadm's %s", def, dt, kubeadm, kt, kubeadmAddressTypes)
}

// kubeadmAddressTypes is what kubeadm passes the API server.
const kubeadmAddressTypes = "InternalIP,ExternalIP,Hostname"

// kubeletHop is the kubelet's /healthz through nodes/proxy: the API
// server reaches the kubelet. A user without nodes/proxy gets a note.
func (w *kubeWalker) kubeletHop(ctx context.Context) Hop {
	return timed(HopKubelet, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		body, err := w.api.kubeletHealthz(ctx, w.nodeName)
		if err != nil {
			if statusCode(err) == 403 {
				h.Outcome, h.Signature, h.Error = Note, "HTTP 403", err.Error()
				h.Detail = "may not get nodes/proxy: the kubelet's /healthz was not read (a note: exec below takes the same API server -> kubelet connection)"
				return
			}
			w.kubeFail(h, "GET /api/v1/nodes/"+w.nodeName+"/proxy/healthz (the kubelet's healthz through the API server)", err)
			return
		}
		h.Detail = fmt.Sprintf("the kubelet of %s answered /healthz %q through the API server", w.nodeName, strings.TrimSpace(string(body)))
	})
}
