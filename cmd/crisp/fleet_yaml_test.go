package main

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// -o yaml reaches stdout as the merged fleet in YAML, not the table.
func TestFleetOutputYAML(t *testing.T) {
	o, out, errOut := onePassingNode("yaml")
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
