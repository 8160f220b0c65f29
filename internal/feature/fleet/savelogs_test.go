package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// --save-logs writes into a folder others may write to: a FIFO planted at
// a node's log name is refused at once (the old open blocked the run for
// good), a link is not written through, and the other nodes' logs are
// saved.
func TestSaveLogsRefusesFIFOAndLink(t *testing.T) {
	api := newFake("node-a", "node-b", "node-c")
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	r, progress := runner(api, time.Minute)
	r.SaveLogs = t.TempDir()
	fifo := filepath.Join(r.SaveLogs, "node-a.smoke.log")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(r.SaveLogs, "node-c.smoke.log")); err != nil {
		t.Fatal(err)
	}

	type result struct {
		fl  *report.Fleet
		err error
	}
	done := make(chan result, 1)
	go func() {
		fl, err := r.Run(context.Background())
		done <- result{fl, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(hangGuard):
		// Release the blocked open with a reader so the test can end.
		rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		<-done
		if err == nil {
			_ = rd.Close()
		}
		t.Fatalf("the run still blocked on a FIFO at a log's name after %s", hangGuard)
	}
	if res.err != nil || len(res.fl.Runs) != 3 {
		t.Fatalf("run: %v, %+v", res.err, res.fl)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the log was written through the link: %q", b)
	}
	for _, want := range []string{"node-a: saving its log: ", "named pipe", "node-c: saving its log: "} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.SaveLogs, "node-b.smoke.log")); err != nil || string(b) != smokeJSON("node-b", "pass") {
		t.Errorf("node-b's saved log: %q, %v", b, err)
	}
}

// hangGuard ends a test whose call blocked (the old code's failure) instead
// of letting it hang; the refusal itself takes no measurable time.
const hangGuard = 5 * time.Second
