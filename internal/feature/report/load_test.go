package report

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// One document is bounded at a few MiB: a longer line is an error that says
// so, not a reason to hold tens of MiB.
func TestDocumentBound(t *testing.T) {
	line := append([]byte(`{"schemaVersion":1,"junk":"`), bytes.Repeat([]byte("x"), 9<<20)...)
	line = append(line, "\"}\n"...)
	_, _, err := Decode("big.json", bytes.NewReader(line))
	if err == nil || !strings.Contains(err.Error(), "big.json: line 1 is longer than 8388608 bytes") {
		t.Errorf("Decode of a 9 MiB line = %v; want it refused at 8 MiB", err)
	}
}

// `crisp report FIFO` with nobody writing waits in open(2): the command's
// context ending (a signal) ends it with the context's cause.
func TestLoadFIFOInterrupted(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sig := errors.New("interrupt")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(sig) })
	if _, err := Load(ctx, []string{fifo}, nil); !errors.Is(err, sig) {
		t.Errorf("Load of a FIFO nobody writes = %v; want the context's cause", err)
	}
}
