package transport

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// FuzzParseTransport: whatever --transport accepts is one of the three
// transports and parses back to itself.
func FuzzParseTransport(f *testing.F) {
	for _, s := range []string{"auto", "SPDY", "websocket", "", "web socket", "spdy\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTransport(s)
		if err != nil {
			if !strings.Contains(err.Error(), "unknown transport") {
				t.Fatalf("ParseTransport(%q) error %q does not say what is wrong", s, err)
			}
			return
		}
		if tr != Auto && tr != SPDY && tr != WebSocket {
			t.Fatalf("ParseTransport(%q) = %q", s, tr)
		}
		if again, err := ParseTransport(string(tr)); err != nil || again != tr {
			t.Fatalf("ParseTransport(%q) = %q, %v; want it to parse back", tr, again, err)
		}
	})
}

// FuzzParseExecProtocol: whatever --protocol accepts is a known subprotocol
// and parses back to itself.
func FuzzParseExecProtocol(f *testing.F) {
	for _, s := range []string{"v5", "v4.channel.k8s.io", "channel.k8s.io", "v6", "base64.channel.k8s.io", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseExecProtocol(s)
		if err != nil {
			return
		}
		if !slices.ContainsFunc(Protocols(CallExec), func(known Protocol) bool { return known.Name == p }) {
			t.Fatalf("ParseExecProtocol(%q) = %q, not a known protocol", s, p)
		}
		if again, err := ParseExecProtocol(p); err != nil || again != p {
			t.Fatalf("ParseExecProtocol(%q) = %q, %v; want it to parse back", p, again, err)
		}
	})
}

// FuzzExitCodeFromText: the code read from a v1-v3 error text is a valid
// exit status, and 1 when the text states none.
func FuzzExitCodeFromText(f *testing.F) {
	for _, s := range []string{
		"command terminated with non-zero exit code: error executing command [sh -c exit 7], exit code 7",
		"exit code 256", "exit code 99999999999999999999", "exit status 3", "", "exit code -1",
	} {
		f.Add(s)
	}
	digits := regexp.MustCompile(`[0-9]`)
	f.Fuzz(func(t *testing.T, text string) {
		code := ExitCodeFromText(text)
		if code < 0 || code > 255 {
			t.Fatalf("ExitCodeFromText(%q) = %d, not an exit status", text, code)
		}
		if !digits.MatchString(text) && code != 1 {
			t.Fatalf("ExitCodeFromText(%q) = %d from a text without a number", text, code)
		}
	})
}

// FuzzPortForwardWebSocketURL: a streaming URL maps to ws(s) or is refused.
func FuzzPortForwardWebSocketURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:1/portforward/x", "https://node/pf", "wss://x", "ftp://x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := WebSocketURL(raw)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://") {
			t.Fatalf("WebSocketURL(%q) = %q, not ws(s)", raw, u)
		}
		_, rest, _ := strings.Cut(raw, "://")
		if !strings.HasSuffix(u, "://"+rest) {
			t.Fatalf("WebSocketURL(%q) = %q changed more than the scheme", raw, u)
		}
	})
}
