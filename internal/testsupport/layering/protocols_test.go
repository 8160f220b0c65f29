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
