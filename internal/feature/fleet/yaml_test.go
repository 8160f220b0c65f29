package fleet

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// -o yaml over the fleet of 500: YAML (not JSON, which a YAML parser also
// reads) that parses back to every node, each with its result and its
// checks, and the cluster's escape kept as data.
func TestScaleYAMLHoldsEveryNode(t *testing.T) {
	fl, _, _ := scaleRunLines(t)
	var y bytes.Buffer
	if err := fl.Write(&y, "yaml"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(y.String(), "runs:\n") {
		t.Fatalf("-o yaml does not start as YAML's block mapping: %q", y.String()[:min(y.Len(), 200)])
	}
	var back report.Fleet
	if err := yaml.UnmarshalStrict(y.Bytes(), &back); err != nil {
		t.Fatalf("-o yaml does not parse as a fleet: %v", err)
	}
	if len(back.Runs) != scaleNodes {
		t.Fatalf("%d runs, want %d", len(back.Runs), scaleNodes)
	}
	byNode := map[string]report.Run{}
	for _, r := range back.Runs {
		byNode[r.Node] = r
	}
	failed := 0
	for i := range scaleNodes {
		name := fmt.Sprintf("node-%04d", i)
		r, ok := byNode[name]
		switch {
		case !ok:
			t.Errorf("%s is missing", name)
			continue
		case r.Kind != "smoke" || len(r.Cells) == 0:
			t.Errorf("%s: kind %q, %d checks", name, r.Kind, len(r.Cells))
		case r.Failed() != (i >= scaleOK):
			t.Errorf("%s: failed %v, want %v: %+v", name, r.Failed(), i >= scaleOK, r.Cells)
		}
		if r.Failed() {
			failed++
		}
	}
	if failed != scaleNodes-scaleOK {
		t.Errorf("%d nodes failed, want %d", failed, scaleNodes-scaleOK)
	}
	if !yamlHasEscape(back) {
		t.Error("the escape from the cluster did not survive the round trip as data")
	}
}

// yamlHasEscape says whether some check's detail kept the cluster's escape.
func yamlHasEscape(f report.Fleet) bool {
	for _, r := range f.Runs {
		for _, c := range r.Cells {
			if strings.Contains(c.Detail, "pulling\x1b[2J image") {
				return true
			}
		}
	}
	return false
}
