package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad1000 merges a thousand smoke reports from files, as
// `crisp report saved/*.log` does after a fleet run (the goal: under 2 s).
func BenchmarkLoad1000(b *testing.B) {
	pass, err := os.ReadFile("testdata/smoke-pass.json")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	names := make([]string, 1000)
	for i := range names {
		doc := bytes.Replace(pass, []byte(`"node": "`), fmt.Appendf(nil, `"node": "n%04d-`, i), 1)
		names[i] = filepath.Join(dir, fmt.Sprintf("n%04d.log", i))
		if err := os.WriteFile(names[i], doc, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		f, err := Load(context.Background(), names, nil)
		if err != nil || len(f.Runs) != len(names) {
			b.Fatalf("merged %v runs: %v", f, err)
		}
		if err := f.WriteText(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
