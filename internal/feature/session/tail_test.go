package session

import (
	"bytes"
	"strings"
	"testing"
)

// tailWriter passes everything on and keeps only the last tailKeep bytes.
func TestTailWriter(t *testing.T) {
	var out bytes.Buffer
	tw := &tailWriter{w: &out}
	big := strings.Repeat("x", 3*tailKeep) + "the end\n"
	for _, chunk := range []string{big[:10], big[10:2000], big[2000:]} {
		if n, err := tw.Write([]byte(chunk)); err != nil || n != len(chunk) {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if out.String() != big {
		t.Errorf("passed on %d bytes, want %d", out.Len(), len(big))
	}
	if got := string(tw.tail()); got != big[len(big)-tailKeep:] {
		t.Errorf("tail: %d bytes ending %q", len(got), got[max(0, len(got)-10):])
	}
	if got := tailOf([]byte(big)); !bytes.Equal(got, tw.tail()) {
		t.Errorf("tailOf differs from the writer's tail")
	}
}
