package main

import (
	"github.com/crisp-cri/crisp/internal/feature/session"

	"errors"
	"slices"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/transport"
)

// FuzzParseOffers: --transport and --protocol either make a plan of
// concrete offers, each offering known subprotocols, or a usage error.
func FuzzParseOffers(f *testing.F) {
	for _, tc := range [][2]string{{"auto", ""}, {"websocket", "v4"}, {"spdy", "channel.k8s.io"}, {"SPDY", "v9"}, {"", ""}, {"tcp", "v5"}} {
		f.Add(tc[0], tc[1])
	}
	f.Fuzz(func(t *testing.T, transportFlag, protocol string) {
		offers, err := session.ParseOffers(transportFlag, protocol)
		if err != nil {
			var ue cmdutil.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("session.ParseOffers(%q, %q) error %v is not a usage error", transportFlag, protocol, err)
			}
			return
		}
		if len(offers) == 0 {
			t.Fatalf("session.ParseOffers(%q, %q) accepted with nothing to offer", transportFlag, protocol)
		}
		for _, o := range offers {
			if o.Transport != transport.SPDY && o.Transport != transport.WebSocket {
				t.Fatalf("session.ParseOffers(%q, %q) offers transport %q", transportFlag, protocol, o.Transport)
			}
			if len(o.Protocols) == 0 {
				t.Fatalf("session.ParseOffers(%q, %q): an offer of no protocol", transportFlag, protocol)
			}
			for _, p := range o.Protocols {
				if !slices.Contains(transport.ExecProtocols, p) {
					t.Fatalf("session.ParseOffers(%q, %q) offers unknown protocol %q", transportFlag, protocol, p)
				}
			}
		}
	})
}
