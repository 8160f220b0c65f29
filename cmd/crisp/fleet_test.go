package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/feature/fleet"
)

func TestFleetUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet"}, "one of smoke, probe, doctor"},
		{[]string{"fleet", "bench"}, `not "bench"`},
		{[]string{"fleet", "smoke", "probe"}, "got 2 arguments"},
		{[]string{"fleet", "smoke", "-l", "a=b", "--nodes", "n1"}, "give one"},
		{[]string{"fleet", "smoke", "--timeout", "-1s"}, "--timeout"},
		{[]string{"fleet", "smoke", "--port", "-1"}, "--port must be 1-65535"},
		{[]string{"fleet", "smoke", "--port", "65536"}, "--port must be 1-65535"},
		{[]string{"fleet", "smoke", "--image", ""}, "--image and --target-image"},
		{[]string{"fleet", "smoke", "--runtime-socket", "run/x.sock"}, "absolute, clean path"},
		{[]string{"fleet", "smoke", "--runtime-socket", "containerd=/a.sock,/b.sock"}, "RUNTIME=PATH pairs"},
		{[]string{"fleet", "smoke", "--nodes", "a,,b"}, "empty name"},
		{[]string{"fleet", "smoke", "-o", "wide"}, "must be table, markdown, json or yaml"},
		{[]string{"fleet", "smoke", "--run-id", "Bad_ID"}, "--run-id must be 1-12 of a-z and 0-9"},
		{[]string{"fleet", "smoke", "--save-logs", "/nonexistent/dir"}, "not a folder"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			// A kubeconfig that does not exist: validation comes first.
			args := append(tt.args, "--kubeconfig", "/nonexistent/kubeconfig")
			code := Main(args, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
			if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("exit %d stderr %q: want %d and %q", code, errOut.String(), cmdutil.ExitUsage, tt.want)
			}
		})
	}
	var out bytes.Buffer
	if code := Main([]string{"fleet", "--help"}, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}); code != 0 || !strings.Contains(out.String(), "EXIT STATUS") {
		t.Errorf("fleet --help: exit %d\n%s", code, out.String())
	}
}

// oneNodeAPI: one node whose pod ends at once with the given log.
type oneNodeAPI struct {
	log  string
	code int32
	pods map[string]corev1.Pod
	gone bool
}

func (a *oneNodeAPI) ListNodes(context.Context, string) ([]corev1.Node, error) {
	return []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}}, nil
}
func (a *oneNodeAPI) GetNode(context.Context, string) (*corev1.Node, error) {
	return nil, fleet.ErrNotFound
}
func (a *oneNodeAPI) CreatePod(_ context.Context, p *corev1.Pod) error {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: fleet.CrispContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: a.code}}}}
	a.pods[p.Name] = *p
	return nil
}
func (a *oneNodeAPI) ListPods(_ context.Context, _, sel string) ([]corev1.Pod, error) {
	var out []corev1.Pod
	for _, p := range a.pods {
		if strings.HasPrefix(sel, fleet.RunLabel) {
			out = append(out, p)
		}
	}
	return out, nil
}
func (a *oneNodeAPI) DeletePod(context.Context, string, string) error { return nil }
func (a *oneNodeAPI) DeletePods(context.Context, string, string) error {
	a.gone, a.pods = true, nil
	return nil
}
func (a *oneNodeAPI) PodLog(context.Context, string, string, string, int64) ([]byte, error) {
	return []byte(a.log), nil
}
func (a *oneNodeAPI) PodEvents(context.Context, string, string) ([]corev1.Event, error) {
	return nil, nil
}

func TestFleetRunExitAndOutputs(t *testing.T) {
	for _, tc := range []struct {
		outcome string
		code    int32
		exit    int
	}{{"pass", 0, 0}, {"fail", 1, 1}} {
		t.Run(tc.outcome, func(t *testing.T) {
			api := &oneNodeAPI{code: tc.code, pods: map[string]corev1.Pod{},
				log: fmt.Sprintf(`{"schemaVersion":1,"kind":"smoke","node":"node-a","checks":[{"call":"exec","name":"echo","outcome":%q}]}`, tc.outcome)}
			var out, errOut bytes.Buffer
			f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
			f.Global.Output = "markdown"
			o := &fleetOptions{Verb: cmdutil.Verb{F: f}, newAPI: func(fleet.KubeconfigOptions) (fleet.API, string, error) { return api, "default", nil },
				JUnit: filepath.Join(t.TempDir(), "fleet.xml"),
				Config: fleet.Config{Mode: "smoke", Image: "crisp:dev", TargetImage: "busybox:1.36", RuntimeSocket: "/run/containerd/containerd.sock",
					Port: 7777, Timeout: time.Minute, Poll: time.Millisecond}}
			err := o.Run(context.Background())
			if got := cmdutil.ExitStatus(err, false); got != tc.exit {
				t.Fatalf("exit %d (%v), want %d; stderr:\n%s", got, err, tc.exit, errOut.String())
			}
			if !api.gone {
				t.Error("the pods were not deleted")
			}
			if !strings.Contains(out.String(), "crisp report: smoke: 1 nodes") || !strings.Contains(errOut.String(), "crisp fleet: node-a:") {
				t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			}
			x, err := os.ReadFile(o.JUnit)
			var s output.JUnitSuites
			if err != nil || xml.Unmarshal(x, &s) != nil || s.Failures != tc.exit {
				t.Errorf("JUnit failures %d (err %v), want %d", s.Failures, err, tc.exit)
			}
		})
	}
}

// onePassingNode is fleet smoke over one node whose report passes, with
// -o output and the streams to read.
func onePassingNode(output string) (o *fleetOptions, out, errOut *bytes.Buffer) {
	api := &oneNodeAPI{pods: map[string]corev1.Pod{},
		log: `{"schemaVersion":1,"kind":"smoke","node":"node-a","checks":[{"call":"exec","name":"echo","outcome":"pass"}]}`}
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}}
	f.Global.Output = output
	return &fleetOptions{Verb: cmdutil.Verb{F: f}, newAPI: func(fleet.KubeconfigOptions) (fleet.API, string, error) { return api, "default", nil },
		Config: fleet.Config{Mode: "smoke", Image: "crisp:dev", TargetImage: "busybox:1.36", RuntimeSocket: "/run/containerd/containerd.sock",
			Timeout: time.Minute, Poll: time.Millisecond}}, out, errOut
}

// -o table is the grouped table; a terminal on stderr gets the live line.
func TestFleetTableAndLiveProgress(t *testing.T) {
	o, out, errOut := onePassingNode("table")
	o.errIsTerminal = func() bool { return true }
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "SMOKE: 1 nodes, 0 failed, 1 ok\n  1 ok   1 passed\n         node-a\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("stdout:\n%s\nwant it to start:\n%s", out.String(), want)
	}
	if e := errOut.String(); strings.Count(e, "\n") != 1 || !strings.Contains(e, "\r\x1b[Kcrisp fleet smoke: 1 nodes: 0 pending, 0 running, 1 ok, 0 failed (") {
		t.Errorf("stderr %q: want the live line alone", e)
	}
}
