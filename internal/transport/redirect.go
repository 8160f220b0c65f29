package transport

import (
	"fmt"
	"net/http"
)

// Streaming upgrades never follow redirects: a streaming URL carries a
// single-use token and the session's data, and a runtime that answers an
// upgrade with 3xx is misconfigured or not the runtime. gorilla/websocket
// and crisp's SPDY port-forward dialer never follow one; client-go's SPDY
// executor runs the upgrade through a net/http Client, which would, so its
// round tripper hides the answer's Location (hideRedirect) and the refusal
// names it (redirectNote).

// headerUnfollowedLocation keeps a hidden redirect's target for messages.
const headerUnfollowedLocation = "X-Crisp-Unfollowed-Location"

// hideRedirect moves a 3xx answer's Location out of net/http's sight: its
// Client returns a redirect without a Location as the response.
func hideRedirect(resp *http.Response) {
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
