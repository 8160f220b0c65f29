package report

import (
	"bytes"
	"os"
	"testing"
)

// FuzzDecode: whatever the input, Decode neither panics nor hangs, every
// report it returns has a node and a check, and the merged fleet's JUnit
// failure count is non-zero exactly when the fleet fails.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"testdata/smoke-fail.json", "testdata/kubectl-logs.txt"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"smoke","node":"n","checks":[{"call":"exec","name":"e","outcome":"pass"}]} {`))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, probs, err := Decode("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, d := range docs {
			if d.Run.Node == "" || len(d.Run.Cells) == 0 {
				t.Fatalf("a report without node or checks: %+v", d.Run)
			}
		}
		fl := Merge(docs, probs)
		var x bytes.Buffer
		if err := fl.WriteJUnit(&x); err != nil {
			t.Fatal(err)
		}
		if (fl.Failures() > 0) != (fl.Check() != nil && len(fl.Runs) > 0) && len(fl.Runs) > 0 {
			t.Fatalf("failures %d but Check() = %v", fl.Failures(), fl.Check())
		}
	})
}
