package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/fleet"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// -o yaml reaches stdout as the merged fleet in YAML, not the table.
func TestFleetOutputYAML(t *testing.T) {
	api := &oneNodeAPI{pods: map[string]corev1.Pod{},
		log: `{"schemaVersion":1,"kind":"smoke","node":"node-a","checks":[{"call":"exec","name":"echo","outcome":"pass"}]}`}
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
	f.Global.Output = "yaml"
	o := &fleetOptions{Verb: cmdutil.Verb{F: f}, newAPI: func(fleet.KubeconfigOptions) (fleet.API, string, error) { return api, "default", nil },
		Config: fleet.Config{Mode: "smoke", Image: "crisp:dev", TargetImage: "busybox:1.36", RuntimeSocket: "/run/containerd/containerd.sock",
			Timeout: time.Minute, Poll: time.Millisecond}}
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errOut.String())
	}
	var back report.Fleet
	if !strings.HasPrefix(out.String(), "runs:\n") || yaml.UnmarshalStrict(out.Bytes(), &back) != nil {
		t.Fatalf("stdout is no fleet in YAML:\n%s", out.String())
	}
	if len(back.Runs) != 1 || back.Runs[0].Node != "node-a" || back.Runs[0].Failed() || len(back.Runs[0].Cells) != 1 {
		t.Errorf("runs %+v, want node-a's passing smoke", back.Runs)
	}
}
