package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/transport"
)

// FuzzParseOffers: --transport and --protocol either make a plan of
// concrete offers, each offering known subprotocols, or a usage error.
func FuzzParseOffers(f *testing.F) {
	for _, tc := range [][2]string{{"auto", ""}, {"websocket", "v4"}, {"spdy", "channel.k8s.io"}, {"SPDY", "v9"}, {"", ""}, {"tcp", "v5"}} {
		f.Add(tc[0], tc[1])
	}
	f.Fuzz(func(t *testing.T, transportFlag, protocol string) {
		offers, err := parseOffers(transportFlag, protocol)
		if err != nil {
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("parseOffers(%q, %q) error %v is not a usage error", transportFlag, protocol, err)
			}
			return
		}
		if len(offers) == 0 {
			t.Fatalf("parseOffers(%q, %q) accepted with nothing to offer", transportFlag, protocol)
		}
		for _, o := range offers {
			if o.Transport != transport.SPDY && o.Transport != transport.WebSocket {
				t.Fatalf("parseOffers(%q, %q) offers transport %q", transportFlag, protocol, o.Transport)
			}
			if len(o.Protocols) == 0 {
				t.Fatalf("parseOffers(%q, %q): an offer of no protocol", transportFlag, protocol)
			}
			for _, p := range o.Protocols {
				if !slices.Contains(transport.ExecProtocols, p) {
					t.Fatalf("parseOffers(%q, %q) offers unknown protocol %q", transportFlag, protocol, p)
				}
			}
		}
	})
}

// FuzzSplitTag: an image reference splits into a repository and a tag that
// join back to it, and a registry's :port stays in the repository.
func FuzzSplitTag(f *testing.F) {
	for _, s := range []string{"nginx:1.27", "registry:5000/app", "registry:5000/app:v1", "busybox", ":", "a:b:c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		repo, tag := splitTag(ref)
		if tag == "<none>" && repo == ref {
			return
		}
		if repo+":"+tag != ref {
			t.Fatalf("splitTag(%q) = %q, %q: they do not join back", ref, repo, tag)
		}
		if strings.Contains(tag, "/") || strings.Contains(tag, ":") {
			t.Fatalf("splitTag(%q) = tag %q with a path or a colon", ref, tag)
		}
	})
}
