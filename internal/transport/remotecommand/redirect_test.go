package remotecommand

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crisp-cri/crisp/internal/transport"

	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// TestUpgradesNeverFollowRedirects: a streaming server answering 302 (or
// 307, which keeps the method) to the upgrade is refused with the status and
// the target in the message, on every transport, and the target never sees
// a request.
func TestUpgradesNeverFollowRedirects(t *testing.T) {
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		followed.Add(1)
		http.Error(w, "should never be reached", http.StatusTeapot)
	}))
	defer target.Close()
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, target.URL+"/elsewhere", status)
		}))
		src := func(context.Context) (string, error) { return redirector.URL + "/exec/tok", nil }
		check := func(name string, err error) {
			t.Helper()
			var refused *transport.RefusedError
			if !errors.As(err, &refused) || refused.Status != status {
				t.Errorf("%d %s: got %v, want a refusal with status %d", status, name, err, status)
				return
			}
			if !strings.Contains(refused.Error(), "not followed") || !strings.Contains(refused.Error(), target.URL+"/elsewhere") {
				t.Errorf("%d %s: refusal %q does not say the redirect to %s was not followed", status, name, refused.Error(), target.URL)
			}
		}

		for _, offer := range []transport.Offer{{Transport: transport.SPDY, Protocols: []string{transport.ExecProtocolV4}}, {Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolV4}}} {
			_, err := Stream(context.Background(), "exec", src, []transport.Offer{offer}, transport.Config{}, Streams{Stdout: &bytes.Buffer{}})
			var neg *transport.NegotiationError
			if !errors.As(err, &neg) || len(neg.Attempts) != 1 {
				t.Errorf("%d exec %s: got %v, want a negotiation error with one attempt", status, offer, err)
				continue
			}
			check("exec "+offer.String(), neg.Attempts[0].Err)
		}
		offers, err := transport.PortForwardOffers(transport.Auto)
		if err != nil {
			t.Fatal(err)
		}
		for _, offer := range offers {
			sess, _, err := portforward.Connect(context.Background(), redirector.URL+"/portforward/tok", offer, []uint16{80}, transport.Config{})
			if sess != nil {
				_ = sess.Close() // a test connection: nothing to report
			}
			check("port-forward "+offer.String(), err)
		}
		redirector.Close()
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests; upgrades must never follow redirects", n)
	}
}
