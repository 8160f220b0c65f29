package deploy

import (
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
	for name, spec := range map[string]struct {
		pod   corev1.PodSpec
		smoke corev1.Container
	}{
		"daemonset": {ds.Spec.Template.Spec, ds.Spec.Template.Spec.InitContainers[0]},
		"job":       {job.Spec.Template.Spec, job.Spec.Template.Spec.Containers[0]},
	} {
		t.Run(name, func(t *testing.T) {
			checkPod(t, spec.pod, spec.smoke)
		})
	}
	if ds.Spec.Selector.MatchLabels["app"] != ds.Spec.Template.Labels["app"] {
		t.Error("the DaemonSet's selector does not select its pods")
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("the Job must run smoke once per node: backoffLimit 0, restartPolicy Never")
	}
}

func checkPod(t *testing.T, pod corev1.PodSpec, smoke corev1.Container) {
	t.Helper()
	if !pod.HostNetwork {
		t.Error("hostNetwork must be true: the runtime's streaming server listens on the node's loopback")
	}
	if len(pod.Tolerations) != 1 || pod.Tolerations[0].Operator != corev1.TolerationOpExists || pod.Tolerations[0].Key != "" {
		t.Errorf("tolerations %v: want one {operator: Exists} to reach every node", pod.Tolerations)
	}
	if smoke.Args[0] != "smoke" || !slices.Contains(smoke.Args, "--image") || !slices.Contains(smoke.Args, "json") {
		t.Errorf("args %v: want smoke --image ... -o json", smoke.Args)
	}
	var nodeName, endpoint string
	for _, e := range smoke.Env {
		switch e.Name {
		case "NODE_NAME":
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				nodeName = e.ValueFrom.FieldRef.FieldPath
			}
		case "CONTAINER_RUNTIME_ENDPOINT":
			endpoint = e.Value
		}
	}
	if nodeName != "spec.nodeName" {
		t.Error("NODE_NAME must come from the downward API's spec.nodeName")
	}
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
	r := smoke.Resources
	if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Cpu().IsZero() || r.Limits.Memory().IsZero() {
		t.Errorf("smoke needs requests and limits for CPU and memory: %v", r)
	}
	if r.Limits.Memory().Cmp(*r.Requests.Memory()) < 0 || r.Limits.Cpu().Cmp(*r.Requests.Cpu()) < 0 {
		t.Errorf("limits below requests: %v", r)
	}
}
