package startup

import (
	"testing"
	"time"
)

// Main is Began until main is marked, then the first mark, for good.
func TestMarkMain(t *testing.T) {
	if !Main().Equal(Began) {
		t.Fatalf("before MarkMain, Main() = %v, want Began %v", Main(), Began)
	}
	before := time.Now()
	MarkMain()
	first := Main()
	if first.Before(before) || first.Equal(Began) {
		t.Fatalf("after MarkMain, Main() = %v, want a time after %v", first, before)
	}
	time.Sleep(time.Millisecond)
	MarkMain()
	if !Main().Equal(first) {
		t.Fatalf("a second MarkMain moved Main() from %v to %v", first, Main())
	}
	if Began.After(first) {
		t.Fatalf("Began %v after main %v", Began, first)
	}
}
