package portforward

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// A streaming server that takes the connection and never answers the
// upgrade (the mock's delay fault) fails negotiation after the request
// timeout, on every protocol and on the whole auto order, with an error that
// says what timed out and what to do.
func TestPortForwardUpgradeTimeout(t *testing.T) {
	_, src := startStreamServer(t, streamserver.ProfileFull, "delay=30s")
	auto, err := transport.PortForwardOffers(transport.Auto)
	if err != nil {
		t.Fatal(err)
	}
	cases := append([]pfCase{{"auto", transport.Offer{}}}, pfCases...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := ForwarderOptions{Source: src, Offers: []transport.Offer{tc.offer},
				Config: transport.Config{UpgradeTimeout: 300 * time.Millisecond}}
			if tc.name == "auto" {
				opts.Offers = auto
			}
			f, err := NewForwarder(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err = f.Negotiate(ctx)
			took := time.Since(start)
			if !errors.Is(err, ErrUpgradeTimeout) {
				t.Fatalf("Negotiate: %v, want the upgrade timeout", err)
			}
			for _, want := range []string{"did not answer", "within 300ms", "--request-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			// One timed-out handshake ends negotiation: a server that does
			// not answer is not a refusal to fall back from.
			if took > 3*time.Second {
				t.Errorf("Negotiate took %v with a 300ms request timeout", took)
			}
		})
	}
}
