package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// protocolName matches a streaming subprotocol name: channel.k8s.io and its
// versioned and base64 variants, portforward.k8s.io and its tunnel.
var protocolName = regexp.MustCompile(`(?:\b[a-z0-9]+\.)*channel\.k8s\.io|(?:SPDY/3\.1\+)?portforward\.k8s\.io`)

// protocolHomes may spell protocol names: transport's catalogue, and the
// mock's server side (which shares no code with the client side).
var protocolHomes = []string{"internal/transport", "internal/mockruntime"}

// TestProtocolNamesOnlyInTheCatalogue keeps protocol knowledge in one place:
// outside the homes above, no non-test Go source may hold a string literal
// that is a protocol name, and no code under internal/ may hold one that
// mentions it (messages there build on the catalogue's constants). Command
// help text in cmd/crisp may mention protocols in prose.
func TestProtocolNamesOnlyInTheCatalogue(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor" || isHome(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		internal := strings.HasPrefix(rel, "internal/")
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			m := protocolName.FindString(s)
			if m == "" {
				return true
			}
			if strings.TrimSpace(s) == m || internal {
				t.Errorf("%s: string literal %q names the protocol %q: use internal/transport's catalogue constants", fset.Position(lit.Pos()), clipped(s), m)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isHome(rel string) bool {
	for _, h := range protocolHomes {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}

func clipped(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// TestProtocolNamePattern keeps the scanner honest: it must see every name
// the catalogue holds.
func TestProtocolNamePattern(t *testing.T) {
	for _, name := range []string{"channel.k8s.io", "v2.channel.k8s.io", "v5.channel.k8s.io", "base64.channel.k8s.io",
		"v4.base64.channel.k8s.io", "portforward.k8s.io", "SPDY/3.1+portforward.k8s.io"} {
		if got := protocolName.FindString(name); got != name {
			t.Errorf("pattern finds %q in %q, want all of it", got, name)
		}
	}
	for _, other := range []string{"k8s.io/client-go", "k8s.io/streaming/pkg/httpstream"} {
		if got := protocolName.FindString(other); got != "" {
			t.Errorf("pattern finds %q in the import path %q", got, other)
		}
	}
}

// endpointOf is where the mock negotiates a catalogue row.
func endpointOf(s transport.Spec) streamserver.Endpoint {
	switch {
	case s.Serves(transport.CallPortForward) && s.Transport == transport.SPDY:
		return streamserver.PortForwardSPDY
	case s.Serves(transport.CallPortForward):
		return streamserver.PortForwardWebSocket
	case s.Transport == transport.SPDY:
		return streamserver.RemoteCommandSPDY
	}
	return streamserver.RemoteCommandWebSocket
}

type tableKey struct {
	endpoint streamserver.Endpoint
	name     string
}

// TestMockTableMatchesTheCatalogue holds the mock's server-side protocol
// table (which shares no code with the client) to the client's catalogue:
// the same protocols at the same endpoints, the tunnel served as the
// tunnel, and exactly the WebSocket versions the catalogue says can close
// stdin served by the mock's v5 code (cri-streaming cannot close stdin).
func TestMockTableMatchesTheCatalogue(t *testing.T) {
	client := map[tableKey]transport.Spec{}
	for _, s := range transport.Catalogue() {
		client[tableKey{endpointOf(s), s.Name}] = s
	}
	mock := map[tableKey]streamserver.ProtocolRow{}
	for _, r := range streamserver.ProtocolTable() {
		mock[tableKey{r.Endpoint, r.Name}] = r
	}
	for k, s := range client {
		r, ok := mock[k]
		if !ok {
			t.Errorf("the catalogue's %s %s (endpoint %d) is not in the mock's table", s.Transport, s.Name, k.endpoint)
			continue
		}
		if k.endpoint == streamserver.RemoteCommandWebSocket && s.Caps.StdinEOF != (r.Server == streamserver.ServedAsV5) {
			t.Errorf("WebSocket %s: the catalogue says it closes stdin: %t; the mock serves it as v5: %t", s.Name, s.Caps.StdinEOF, r.Server == streamserver.ServedAsV5)
		}
		if (s.Framing == transport.FramingSPDYTunnel) != (r.Server == streamserver.ServedAsTunnel) {
			t.Errorf("%s %s: a tunnel on one side only", s.Transport, s.Name)
		}
	}
	for k := range mock {
		if _, ok := client[k]; !ok {
			t.Errorf("the mock's %s (endpoint %d) is not in the catalogue", k.name, k.endpoint)
		}
	}
}
