package transport

import (
	"strings"
	"testing"
)

func TestShorten(t *testing.T) {
	if got := Shorten("http://127.0.0.1:1/exec/tok"); got != "http://127.0.0.1:1/exec/tok" {
		t.Errorf("a short value changed: %q", got)
	}
	long := "http://127.0.0.1:1/exec/" + strings.Repeat("é", 5<<20)
	got := Shorten(long)
	if len(got) > MaxShown+40 || !strings.HasPrefix(got, "http://127.0.0.1:1/exec/") || !strings.Contains(got, "bytes cut]") {
		t.Errorf("Shorten of %d bytes = %d bytes: %.80q", len(long), len(got), got)
	}
	if got != strings.ToValidUTF8(got, "") {
		t.Errorf("not valid UTF-8: %q", got)
	}
}

func TestRefusalMessagesAreShort(t *testing.T) {
	long := "http://127.0.0.1:1/exec/" + strings.Repeat("x", 10<<20)
	ref := &RefusedError{Offer: Offer{Transport: SPDY, Protocols: []string{ExecProtocolV4}}, URL: long, Status: 404, Reason: strings.Repeat("y", 1<<20)}
	neg := &NegotiationError{Op: "exec", Attempts: []Attempt{{Offer: ref.Offer, URL: long, Err: ref}}}
	for _, err := range []error{ref, neg} {
		if n := len(err.Error()); n > 4*MaxShown {
			t.Errorf("%T's message is %d bytes", err, n)
		}
	}
}
