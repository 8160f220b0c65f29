package fleet

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and names of what a run creates. Every pod carries ManagedByLabel
// (so that leftovers of any run can be found) and RunLabel with the run's
// ID (so that a run deletes its own pods and nothing else).
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "crisp-fleet"
	RunLabel       = "crisp-fleet-run"
	NodeAnnotation = "crisp-fleet-node"

	// CrispContainer runs crisp smoke, probe or doctor; the target (targetName) is
	// the native sidecar (an init container with restartPolicy Always) it
	// targets: a container the kubelet created, which it will not remove.
	CrispContainer = "crisp"

	// socketMount is where the node's runtime socket appears in the pod.
	socketMount = "/run/crisp-fleet/runtime.sock"
)

// podName names the pod of node number i of a run (its attempt-th try,
// from 0): short and unique (node names can be 253 characters long; the
// node is in an annotation).
func podName(mode, runID string, i, attempt int) string {
	if attempt > 0 {
		return fmt.Sprintf("crisp-%s-%s-%d-r%d", mode, runID, i, attempt)
	}
	return fmt.Sprintf("crisp-%s-%s-%d", mode, runID, i)
}

// targetName names the target container, unique to the run: crisp finds it
// by name among every container of the node's runtime.
func targetName(runID string) string { return "crisp-target-" + runID }

// Placement is what makes one node's pod: the node, its index in the run,
// the try (from 0), the target's port and the runtime's socket on the node.
type Placement struct {
	Node                 string
	Index, Attempt, Port int
	Socket               string
}

// PodFor is the pod that runs mode (smoke, probe or doctor) on node. It is pinned
// by nodeName (no scheduler involved), on the host network (the runtime's
// streaming server listens on the node's loopback), with the node's
// runtime socket from a hostPath, and as locked down as that allows: every
// capability dropped, seccomp RuntimeDefault, no service account token, no
// toleration of NoExecute taints (a node being drained is left alone).
// crisp targets its own sidecar by name within its own pod, so it never
// creates a pod through the CRI, which a kubelet would remove.
func (c *Config) PodFor(pl Placement, smokeTimeout string) *corev1.Pod {
	node, i, attempt, portN := pl.Node, pl.Index, pl.Attempt, pl.Port
	no, yes := false, true
	root, nobody := int64(0), int64(65534)
	grace := int64(5)
	port := strconv.Itoa(portN)
	name := podName(c.Mode, c.RunID, i, attempt)
	target := targetName(c.RunID)
	args := []string{c.Mode, target, "--pod", name, "--port", port, "-o", "json", "--node-name", node}
	if c.Mode == ModeSmoke {
		args = append(args, "--timeout", smokeTimeout)
	}
	if c.Target != "" {
		args = []string{c.Mode, c.Target, "-o", "json", "--node-name", node}
		if portN > 0 {
			args = append(args, "--port", port)
		}
	}
	args = append(args, c.ExtraArgs...)
	locked := func(user *int64) *corev1.SecurityContext {
		return &corev1.SecurityContext{
			RunAsUser:                user,
			AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem:   &yes,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
	}
	socketType := corev1.HostPathSocket
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   c.Namespace,
			Labels:      map[string]string{ManagedByLabel: ManagedBy, RunLabel: c.RunID, "app.kubernetes.io/name": "crisp-fleet"},
			Annotations: map[string]string{NodeAnnotation: node},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			HostNetwork:                   true,
			DNSPolicy:                     corev1.DNSDefault, // ClusterFirstWithHostNet warns on clusters without DNS; crisp needs none
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext:               &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			// nodeName skips the scheduler (and its NoSchedule taints);
			// NoExecute is not tolerated: a node being drained evicts it.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			InitContainers: []corev1.Container{{
				Name:                     target,
				Image:                    c.TargetImage,
				ImagePullPolicy:          corev1.PullIfNotPresent,
				RestartPolicy:            &always,
				Command:                  []string{"sh", "-c", targetScript(target, portN)},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext:          nonRoot(locked(&nobody)),
				// Inside the container: a TCP probe would pass on any
				// process of the node listening on the port.
				StartupProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 0.2; pidof nc"}}},
					PeriodSeconds: 1, FailureThreshold: 30, TimeoutSeconds: 2,
				},
				Resources: resources("10m", "8Mi", "100m", "32Mi"),
			}},
			Containers: []corev1.Container{{
				Name:            CrispContainer,
				Image:           c.Image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Args:            args,
				Env:             []corev1.EnvVar{{Name: "CONTAINER_RUNTIME_ENDPOINT", Value: "unix://" + socketMount}},
				// root: the runtime socket is root's; nothing else is kept.
				SecurityContext: locked(&root),
				VolumeMounts:    []corev1.VolumeMount{{Name: "runtime-socket", MountPath: socketMount}},
				// Measured: a smoke run peaks under 90 MiB RSS (docs/fleet.md).
				Resources: resources("100m", "96Mi", "1", "192Mi"),
			}},
			Volumes: []corev1.Volume{{Name: "runtime-socket", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: pl.Socket, Type: &socketType},
			}}},
		},
	}
	if c.Target != "" {
		pod.Spec.InitContainers = nil // the path goes to a container of the node's own
	}
	return pod
}

func nonRoot(sc *corev1.SecurityContext) *corev1.SecurityContext {
	yes := true
	sc.RunAsGroup, sc.RunAsNonRoot = sc.RunAsUser, &yes
	return sc
}

func resources(cpu, mem, cpuLimit, memLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memLimit)},
	}
}

// exitPortLost is the target's exit status when its echo server ends,
// which busybox nc does at once when another process of the node (host
// network) holds the port.
const exitPortLost = 3

// targetLastWords starts the line the target prints when its echo server
// ends; with FallbackToLogsOnError it is in the container's termination
// message.
const targetLastWords = "crisp fleet target: the echo server on port"

// targetScript runs busybox nc as an echo server on port (port-forward's
// checks) and prints a line a second for ten minutes (attach's checks).
// The script lives exactly as long as nc: when nc cannot listen (another
// process of the node holds the port) or dies, the container ends with
// exitPortLost and says so, so that no check runs against another
// process's port and the run can tell. SIGTERM ends it at once (pid 1
// would ignore it and wait for the grace period). No $( in the script:
// Kubernetes would read it as a variable reference.
func targetScript(target string, port int) string {
	p := strconv.Itoa(port)
	return "trap 'exit 0' TERM; nc -ll -p " + p + " -e cat & n=$!; " +
		"yes " + target + ` | head -n 600 | while read -r line; do echo "$line"; sleep 1; done & ` +
		"wait $n; echo \"" + targetLastWords + " " + p + " ended (nc exit status $?); nc ends at once when another process of the node listens on the port\" >&2; " +
		"exit " + strconv.Itoa(exitPortLost)
}
