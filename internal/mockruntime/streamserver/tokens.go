package streamserver

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The token rules are cri-streaming's (request_cache.go): a token lives a
// minute, at most 1000 are outstanding, and the first request that presents
// one consumes it, whatever becomes of that request.
const (
	tokenTTL      = time.Minute
	maxTokens     = 1000
	tokenRawBytes = 12 // 16 URL-safe characters
)

// endpoint kinds, also the first URL path segment.
const (
	kindExec        = "exec"
	kindAttach      = "attach"
	kindPortForward = "portforward"
)

type tokenEntry struct {
	kind    string
	req     any // *runtimeapi.ExecRequest, *AttachRequest or *PortForwardRequest
	expires time.Time
}

// tokenCache hands out single-use tokens. It outlives Stop/Start, as a
// runtime's request cache outlives a restart of its HTTP listener.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]tokenEntry
	now     func() time.Time
}

func newTokenCache() *tokenCache {
	return &tokenCache{entries: map[string]tokenEntry{}, now: time.Now}
}

func (c *tokenCache) insert(kind string, req any) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for tok, e := range c.entries {
		if now.After(e.expires) {
			delete(c.entries, tok)
		}
	}
	if len(c.entries) >= maxTokens {
		return "", status.Error(codes.ResourceExhausted, "maximum number of in-flight requests exceeded")
	}
	raw := make([]byte, tokenRawBytes)
	for {
		if _, err := rand.Read(raw); err != nil {
			return "", status.Errorf(codes.Internal, "generating a streaming token: %v", err)
		}
		tok := base64.RawURLEncoding.EncodeToString(raw)
		if _, taken := c.entries[tok]; taken {
			continue
		}
		c.entries[tok] = tokenEntry{kind: kind, req: req, expires: now.Add(tokenTTL)}
		return tok, nil
	}
}

// consume removes the token and returns its request if it was issued for
// kind and has not expired.
func (c *tokenCache) consume(kind, tok string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[tok]
	if !ok {
		return nil, false
	}
	delete(c.entries, tok)
	if e.kind != kind || c.now().After(e.expires) {
		return nil, false
	}
	return e.req, true
}
