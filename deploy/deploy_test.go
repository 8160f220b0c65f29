package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestStrictDecodeRejectsUnknownFields(t *testing.T) {
	bad := strings.Replace(string(daemonSetYAML), "hostNetwork: true", "hostNetwrok: true", 1)
	if _, err := DaemonSet(); err != nil {
		t.Fatal(err)
	}
	saved := daemonSetYAML
	defer func() { daemonSetYAML = saved }()
	daemonSetYAML = []byte(bad)
	if _, err := DaemonSet(); err == nil {
		t.Fatal("a misspelt field decoded without error: the decode is not strict")
	}
}

func TestManifests(t *testing.T) {
	ds, err := DaemonSet()
	if err != nil {
		t.Fatal(err)
	}
	job, err := Job()
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]struct {
		pod  corev1.PodSpec
		yaml []byte
	}{
		"daemonset": {ds.Spec.Template.Spec, daemonSetYAML},
		"job":       {job.Spec.Template.Spec, jobYAML},
	} {
		t.Run(name, func(t *testing.T) {
			checkPod(t, m.pod, string(m.yaml))
		})
	}
	if ds.Spec.Selector.MatchLabels["app"] != ds.Spec.Template.Labels["app"] {
		t.Error("the DaemonSet's selector does not select its pods")
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("the Job must run smoke once per node: backoffLimit 0, restartPolicy Never")
	}
	if len(ds.Spec.Template.Spec.Containers) != 1 || !slices.ContainsFunc(ds.Spec.Template.Spec.InitContainers, isSmoke) {
		t.Error("the DaemonSet runs smoke as an init container and holds the pod with one container")
	}
	if len(job.Spec.Template.Spec.Containers) != 1 || !isSmoke(job.Spec.Template.Spec.Containers[0]) {
		t.Error("the Job's one container is smoke")
	}
}

func isSmoke(c corev1.Container) bool { return c.Name == "smoke" }

// containers lists every container of pod, init containers first.
func containers(pod corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container(nil), pod.InitContainers...), pod.Containers...)
}

func checkPod(t *testing.T, pod corev1.PodSpec, text string) {
	t.Helper()
	if !pod.HostNetwork {
		t.Error("hostNetwork must be true: the runtime's streaming server listens on the node's loopback")
	}
	if pod.DNSPolicy == corev1.DNSClusterFirstWithHostNet || pod.DNSPolicy == corev1.DNSClusterFirst || pod.DNSPolicy == "" {
		t.Errorf("dnsPolicy %q: want Default (cluster DNS policies raise MissingClusterDNS events where there is none)", pod.DNSPolicy)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken must be false: nothing in the pod talks to the API server")
	}
	if sc := pod.SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("the pod needs seccompProfile RuntimeDefault")
	}
	if len(pod.Tolerations) == 0 {
		t.Error("no tolerations: tainted nodes would be skipped")
	}
	for _, tol := range pod.Tolerations {
		if tol.Effect == "" || tol.Effect == corev1.TaintEffectNoExecute {
			t.Errorf("toleration %+v tolerates NoExecute: a drained node must evict the pod", tol)
		}
	}

	var smoke, target *corev1.Container
	all := containers(pod)
	for i := range all {
		c := &all[i]
		if isSmoke(*c) {
			smoke = c
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			target = c
		}
		checkHardened(t, *c)
		if c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("container %s: imagePullPolicy %q, want IfNotPresent (preloaded images work air-gapped)", c.Name, c.ImagePullPolicy)
		}
		if !strings.Contains(text, "#   "+c.Image+" ") {
			t.Errorf("container %s: image %s is not in the header's list of replaceable images", c.Name, c.Image)
		}
	}
	if smoke == nil || target == nil {
		t.Fatal("want a container smoke and a native sidecar (init container, restartPolicy Always) for it to target")
	}
	checkSmoke(t, pod, *smoke, *target)
}

// checkHardened: every capability dropped, no privilege escalation, a
// read-only root; only smoke runs as root (the socket is root's).
func checkHardened(t *testing.T, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container %s: capabilities must drop ALL and add none", c.Name)
		return
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container %s: want allowPrivilegeEscalation false and readOnlyRootFilesystem true", c.Name)
	}
	if sc.RunAsUser == nil || (*sc.RunAsUser == 0) != isSmoke(c) {
		t.Errorf("container %s: only smoke runs as root (it opens the runtime's socket), the rest as a non-root user", c.Name)
	}
	r := c.Resources
	if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Cpu().IsZero() || r.Limits.Memory().IsZero() {
		t.Errorf("container %s needs requests and limits for CPU and memory: %v", c.Name, r)
	}
	if r.Limits.Memory().Cmp(*r.Requests.Memory()) < 0 || r.Limits.Cpu().Cmp(*r.Requests.Cpu()) < 0 {
		t.Errorf("container %s: limits below requests: %v", c.Name, r)
	}
}

// checkSmoke: smoke targets the sidecar by name within its own pod (never
// --image: a kubelet removes pods it did not create), on the port the
// sidecar's echo server listens on, against the mounted socket, with the
// image `make image` builds.
func checkSmoke(t *testing.T, pod corev1.PodSpec, smoke, target corev1.Container) {
	t.Helper()
	args := smoke.Args
	if len(args) < 2 || args[0] != "smoke" || args[1] != target.Name || slices.Contains(args, "--image") || !slices.Contains(args, "json") {
		t.Errorf("args %v: want smoke %s ... -o json (no --image)", args, target.Name)
	}
	if i := slices.Index(args, "--pod"); i < 0 || i+1 >= len(args) || args[i+1] != "$(POD_NAME)" {
		t.Errorf("args %v: want --pod $(POD_NAME), the sidecar's own pod", args)
	}
	port := ""
	if i := slices.Index(args, "--port"); i >= 0 && i+1 < len(args) {
		port = args[i+1]
	}
	if port == "" || !strings.Contains(strings.Join(target.Command, " "), "nc -ll -p "+port+" -e cat") {
		t.Errorf("smoke's --port %q is not where the sidecar's echo server listens: %v", port, target.Command)
	}
	// On the host network a TCP probe passes on any process of the node
	// listening on the port: the probe must look inside the sidecar.
	if sp := target.StartupProbe; sp == nil || sp.Exec == nil || !strings.Contains(strings.Join(sp.Exec.Command, " "), "pidof nc") {
		t.Errorf("the sidecar needs a startupProbe that finds its own nc, so that smoke starts once its echo server listens: %+v", sp)
	}
	if target.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("the sidecar's termination message should be its log's end (nc: bind: ...), not %q", target.TerminationMessagePolicy)
	}
	for _, a := range target.Command {
		if strings.Contains(a, "$(") {
			t.Errorf("the sidecar's command holds $( which Kubernetes expands as a variable: %q", a)
		}
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range smoke.Env {
		env[e.Name] = e
	}
	fieldPath := func(name string) string {
		if e := env[name]; e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
		return ""
	}
	if fieldPath("NODE_NAME") != "spec.nodeName" || fieldPath("POD_NAME") != "metadata.name" {
		t.Error("NODE_NAME and POD_NAME must come from the downward API's spec.nodeName and metadata.name")
	}
	endpoint := env["CONTAINER_RUNTIME_ENDPOINT"].Value
	if len(smoke.VolumeMounts) != 1 || "unix://"+smoke.VolumeMounts[0].MountPath != endpoint {
		t.Fatalf("CONTAINER_RUNTIME_ENDPOINT %q is not the mounted socket %v", endpoint, smoke.VolumeMounts)
	}
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == smoke.VolumeMounts[0].Name {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil || vol.HostPath == nil || vol.HostPath.Type == nil || *vol.HostPath.Type != corev1.HostPathSocket {
		t.Fatalf("volume %q must be a hostPath of type Socket", smoke.VolumeMounts[0].Name)
	}
	if tag := makeImageTag(t); smoke.Image != "crisp:"+tag {
		t.Errorf("smoke's image %s is not what `make image` builds (crisp:%s)", smoke.Image, tag)
	}
}

// makeImageTag reads the Makefile's default IMAGE_TAG.
func makeImageTag(t *testing.T) string {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^IMAGE_TAG \?= (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no default IMAGE_TAG (IMAGE_TAG ?= ...)")
	}
	return string(m[1])
}
