package streamserver

import (
	"bytes"
	"context"
	"strings"
	"testing"

	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// FuzzDecodeResizes feeds arbitrary bytes to the resize decoder: it must end
// (closing its channel) at the first malformed value or the end of input.
func FuzzDecodeResizes(f *testing.F) {
	for _, s := range []string{`{"Width":80,"Height":24}{"Width":100,"Height":40}`, `{"Width":-1}`, `{"Width":80`, "", "null", `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ch := make(chan remotecommandserver.TerminalSize)
		go decodeResizes(context.Background(), bytes.NewReader(data), ch)
		n := 0
		for range ch {
			n++
			if n > len(data) {
				t.Fatalf("%d sizes from %d bytes", n, len(data))
			}
		}
	})
}

// FuzzSplitPath: the mock's streaming paths are /kind/token with a known
// kind and a token without slashes, or refused.
func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"/exec/abc", "/attach/x", "/portforward/t", "/exec/", "/exec/a/b", "exec/a", "/nope/a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		kind, tok, ok := splitPath(p)
		if !ok {
			return
		}
		if kind != kindExec && kind != kindAttach && kind != kindPortForward {
			t.Fatalf("splitPath(%q) kind %q", p, kind)
		}
		if tok == "" || strings.Contains(tok, "/") || p != "/"+kind+"/"+tok {
			t.Fatalf("splitPath(%q) = %q, %q", p, kind, tok)
		}
	})
}
