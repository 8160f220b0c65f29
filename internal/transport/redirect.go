package transport

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Streaming upgrades never follow redirects: a streaming URL carries a
// single-use token and the session's data, and a runtime that answers an
// upgrade with 3xx is misconfigured or not the runtime. gorilla/websocket
// and crisp's SPDY port-forward dialer never follow one; client-go's SPDY
// executor runs the upgrade through a net/http Client, which would, so its
// round tripper hides the answer's Location (HideRedirect) and the refusal
// names it (redirectNote).

// headerUnfollowedLocation keeps a hidden redirect's target for messages.
const headerUnfollowedLocation = "X-Crisp-Unfollowed-Location"

// HideRedirect moves a 3xx answer's Location out of net/http's sight: its
// Client returns a redirect without a Location as the response.
func HideRedirect(resp *http.Response) {
	if resp == nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		resp.Header.Del("Location")
		resp.Header.Set(headerUnfollowedLocation, loc)
	}
}

// redirectNote explains a refused upgrade that was a redirect; "" otherwise.
func redirectNote(resp *http.Response) string {
	if resp == nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return ""
	}
	loc := resp.Header.Get(headerUnfollowedLocation)
	if loc == "" {
		loc = resp.Header.Get("Location")
	}
	if loc == "" {
		return " (a redirect without a target; crisp never follows redirects during an upgrade)"
	}
	return fmt.Sprintf(" (a redirect to %s, not followed: crisp never follows redirects during an upgrade; point crisp at the runtime's own streaming server)", loc)
}

// RefusalReason reads a refused upgrade's answer: "403 Forbidden: body".
func RefusalReason(resp *http.Response) string {
	reason := resp.Status
	if reason == "" {
		reason = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if resp.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if msg := oneLine(string(body)); msg != "" {
			reason += ": " + msg
		}
	}
	return reason + redirectNote(resp)
}

// oneLine squeezes a server's message into one short line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// WebSocketURL maps http(s) streaming URLs to ws(s).
func WebSocketURL(raw string) (string, error) {
	switch {
	case strings.HasPrefix(raw, "http://"):
		return "ws://" + strings.TrimPrefix(raw, "http://"), nil
	case strings.HasPrefix(raw, "https://"):
		return "wss://" + strings.TrimPrefix(raw, "https://"), nil
	case strings.HasPrefix(raw, "ws://"), strings.HasPrefix(raw, "wss://"):
		return raw, nil
	}
	return "", fmt.Errorf("streaming URL %q is not http(s) or ws(s)", raw)
}
