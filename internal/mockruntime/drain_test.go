package mockruntime

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An ended process whose output waits in its pipe while the stream takes
// longer than drainIdle over one chunk (a slow client further on) is late,
// not silent: drain leaves its pipe open and every byte arrives.
func TestDrainWaitsForAWriteInFlight(t *testing.T) {
	const size = 600 << 10 // fits the pipe: the process exits at once
	p, err := startProc(procSpec{argv: []string{"/bin/sh", "-c", "head -c 614400 /dev/zero"}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	var got atomic.Int64
	var pumps sync.WaitGroup
	for i, o := range p.outputs() {
		pumps.Add(1)
		go func() {
			defer pumps.Done()
			first := i == 0
			p.pump(o.f, func(b []byte) error {
				if first {
					first = false
					time.Sleep(drainIdle + time.Second)
				}
				got.Add(int64(len(b)))
				return nil
			})
		}()
	}
	<-p.done
	p.drain(&pumps)
	if got.Load() != size {
		t.Fatalf("the stream got %d of %d bytes", got.Load(), size)
	}
}
