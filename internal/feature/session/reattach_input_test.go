package session

import (
	"errors"
	"io"
	"testing"
	"time"
)

// readResult is one Read's outcome, for reads made on a goroutine.
type readResult struct {
	s   string
	err error
}

func readAsync(r io.Reader, size int) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		buf := make([]byte, size)
		n, err := r.Read(buf)
		ch <- readResult{string(buf[:n]), err}
	}()
	return ch
}

func await(t *testing.T, ch <-chan readResult) readResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return")
		return readResult{}
	}
}

// A session's reader that is still waiting when its session ends takes
// nothing: what is typed next goes to the next session.
func TestInputEndedLeaseTakesNothing(t *testing.T) {
	pr, pw := io.Pipe()
	in := NewLeasedInput(pr)
	first := in.Lease()
	waiting := readAsync(first, 64)
	first.End()
	if r := await(t, waiting); !errors.Is(r.err, io.EOF) || r.s != "" {
		t.Fatalf("the ended lease's Read = %q, %v; want nothing and io.EOF", r.s, r.err)
	}
	second := in.Lease()
	got := readAsync(second, 64)
	if _, err := pw.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if r := await(t, got); r.err != nil || r.s != "two\n" {
		t.Fatalf("the next lease's Read = %q, %v; want %q", r.s, r.err, "two\n")
	}
	second.End()
	if n, err := first.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("a Read after End = %d, %v; want 0, io.EOF", n, err)
	}
	_ = pw.Close()
}

// What does not fit one Read stays for the next, whichever lease makes it,
// before anything read later.
func TestInputCarriesTheRestInOrder(t *testing.T) {
	pr, pw := io.Pipe()
	in := NewLeasedInput(pr)
	first := in.Lease()
	got := readAsync(first, 3)
	if _, err := pw.Write([]byte("abcdef")); err != nil {
		t.Fatal(err)
	}
	if r := await(t, got); r.s != "abc" {
		t.Fatalf("first Read = %q, want %q", r.s, "abc")
	}
	first.End()
	second := in.Lease()
	go func() { _, _ = pw.Write([]byte("gh")); _ = pw.Close() }()
	all, err := io.ReadAll(second)
	if err != nil || string(all) != "defgh" {
		t.Fatalf("the next lease read %q, %v; want %q", all, err, "defgh")
	}
}

// The input's end reaches every lease, and its reader goroutine is gone.
func TestInputEnds(t *testing.T) {
	pr, pw := io.Pipe()
	in := NewLeasedInput(pr)
	lease := in.Lease()
	broken := errors.New("input broke")
	_ = pw.CloseWithError(broken)
	if _, err := lease.Read(make([]byte, 8)); !errors.Is(err, broken) {
		t.Fatalf("Read after the input broke: %v, want %v", err, broken)
	}
	if _, err := in.Lease().Read(make([]byte, 8)); !errors.Is(err, broken) {
		t.Fatalf("a later lease's Read: %v, want %v", err, broken)
	}
}
